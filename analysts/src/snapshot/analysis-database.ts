import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { companyPath, fileVersion, openReader, type ProjectionDb, quoteIdent } from '@pda/projections/model';
import { ReadHandle } from '@pda/projections/read';
import Database from 'better-sqlite3';
import { buildDictionary } from '../dictionary/build-dictionary.ts';
import { companyFileIds } from '../files/data-dir.ts';
import { isoFromMicros, summarizeControlCompanies } from '../inspect/company-summaries.ts';
import { createProgress, formatCount } from '../output/progress.ts';
import { type AnalysisTable, analysisSchema, createIndexesSql, createTableSql } from './analysis-schema.ts';

/**
 * `snapshot --all`: one analysis database with every company's rows (analysis-schema.ts). Each
 * company file is read in one read transaction, so its rows are consistent with each other (a
 * site and its contacts as of one commit); files are read one after the other, each as of the
 * moment it was read. A read transaction never blocks ingest (WAL): the writer goes on committing,
 * only its checkpoint cannot recycle the WAL pages the reader still needs until the read ends.
 *
 * The output is written to `<out>.partial-<pid>` with journaling off (it is ours alone, and a
 * failed build is simply deleted), then switched to rollback-journal mode and renamed into place.
 */

export interface AnalysisResult {
  readonly companies: number;
  readonly rows: number;
  readonly bytes: number;
}

const ROWS_PER_PROGRESS = 5_000;

function tableNames(db: ProjectionDb): Set<string> {
  return new Set(
    (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
      (r) => r.name,
    ),
  );
}

function columnNames(db: ProjectionDb, table: string): Set<string> {
  return new Set(
    (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((r) => r.name),
  );
}

/** Rows of the tables the analysis database copies, per company (for the ETA; read before copying). */
function countRows(dataDir: string, ids: readonly string[], tables: readonly AnalysisTable[]): number {
  let total = 0;
  for (const id of ids) {
    const db = openReader(companyPath(dataDir, id));
    try {
      const present = tableNames(db);
      for (const table of tables) {
        if (table.from === null || !present.has(table.from)) continue;
        total += (db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(table.from)}`).get() as { n: number }).n;
      }
    } finally {
      db.close();
    }
  }
  return total;
}

export interface AnalysisOptions {
  readonly force?: boolean;
  readonly write?: (line: string) => void;
  readonly nowMs?: () => number;
}

export function buildAnalysisDatabase(
  dataDir: string,
  out: string,
  options: AnalysisOptions = {},
): AnalysisResult {
  if (existsSync(out) && !options.force)
    throw new Error(`${out} exists (remove it, or pass --force to replace it)`);
  const nowMs = options.nowMs ?? Date.now;
  const schema = analysisSchema(buildDictionary());
  const copied = schema.filter((table) => table.from !== null);
  const ids = companyFileIds(dataDir);
  const control = summarizeControlCompanies(dataDir);
  const total = countRows(dataDir, ids, copied);

  const partial = `${out}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  const target = new Database(partial);
  let done = 0;
  const progress = createProgress({
    label: 'snapshot --all',
    total,
    ...(options.write ? { write: options.write } : {}),
    detail: () => `${done}/${ids.length} companies`,
  });
  try {
    // better-sqlite3 enforces foreign keys by default; these declare relations (for Datasette), and a
    // row may arrive before the row it points at.
    target.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF;');
    for (const table of schema) target.exec(createTableSql(table));
    const insertCompany = target.prepare(
      'INSERT INTO companies (id, name, currency, created_at, updated_at, schema_version, last_changed_at, snapshot_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );

    for (const id of ids) {
      const source = openReader(companyPath(dataDir, id));
      try {
        const handle = new ReadHandle(source);
        handle.snapshot(() => {
          const snapshotAt = new Date(nowMs()).toISOString();
          const present = tableNames(source);
          const meta = source.prepare('SELECT last_changed_us FROM meta').get() as
            | { last_changed_us: number }
            | undefined;
          target.transaction(() => {
            for (const table of copied) {
              if (table.from === null || !present.has(table.from)) continue;
              // A file at another schema version may lack a column: it is copied as NULL.
              const have = columnNames(source, table.from);
              const columns = table.columns.filter((column) => column.name !== 'company_id');
              const select = columns.map((column) =>
                have.has(column.name) ? quoteIdent(column.name) : 'NULL',
              );
              const insert = target.prepare(
                `INSERT INTO ${quoteIdent(table.name)} (company_id, ${columns.map((c) => quoteIdent(c.name)).join(', ')}) VALUES (${[
                  '?',
                  ...columns.map(() => '?'),
                ].join(', ')})`,
              );
              let pending = 0;
              const rows = source
                .prepare(`SELECT ${select.join(', ')} FROM ${quoteIdent(table.from)}`)
                .raw(true);
              for (const row of rows.iterate() as IterableIterator<unknown[]>) {
                insert.run(id, ...row);
                if (++pending === ROWS_PER_PROGRESS) {
                  progress.add(pending);
                  pending = 0;
                }
              }
              progress.add(pending);
            }
            const known = control.get(id);
            insertCompany.run(
              id,
              known?.name ?? null,
              known?.currency ?? null,
              known?.created_at ?? null,
              known?.updated_at ?? null,
              fileVersion(source),
              meta && meta.last_changed_us > 0 ? isoFromMicros(meta.last_changed_us) : null,
              snapshotAt,
            );
          })();
        });
      } finally {
        source.close();
      }
      done++;
    }
    // Companies control.sqlite knows that have no file yet (nothing projected for them).
    target.transaction(() => {
      for (const [id, known] of control) {
        if (ids.includes(id)) continue;
        insertCompany.run(
          id,
          known.name,
          known.currency,
          known.created_at,
          known.updated_at,
          null,
          null,
          null,
        );
      }
    })();
    for (const table of schema) for (const sql of createIndexesSql(table)) target.exec(sql);
    target.exec('ANALYZE');
    target.pragma('journal_mode = DELETE');
    target.close();
    if (options.force) rmSync(out, { force: true });
    renameSync(partial, out);
  } catch (error) {
    if (target.open) target.close();
    rmSync(partial, { force: true });
    throw error;
  }
  const rows = progress.done(` from ${formatCount(ids.length)} company files → ${out}`);
  return { companies: ids.length, rows, bytes: statSync(out).size };
}
