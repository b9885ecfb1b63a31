import { createWriteStream, renameSync, rmSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { UsageError } from '@pda/projections/cli';
import { type ProjectionDb, quoteIdent } from '@pda/projections/model';
import { write } from '../cli/command.ts';
import { csvRecord } from '../output/csv.ts';
import { createProgress } from '../output/progress.ts';
import { type ParquetColumn, ParquetSink } from './parquet-sink.ts';

/**
 * `export`: one table of one file as CSV, JSON Lines or Parquet, streamed (rows are read one by
 * one from SQLite and written in chunks; memory stays flat however large the table). The count and
 * the rows are read in one read transaction, so the output is the table as of one commit and the
 * progress' ETA is exact. A file output is written beside its name and renamed into place at the
 * end: an interrupted export leaves no half file under the requested name.
 */

export type ExportFormat = 'csv' | 'jsonl' | 'parquet';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['csv', 'jsonl', 'parquet'];

export interface ExportOptions {
  readonly db: ProjectionDb;
  /** What the rows are (`company <id>`, a path): Parquet key-value metadata. */
  readonly label: string;
  readonly table: string;
  /** Columns to export; default: every column but the stored `_json` documents. */
  readonly columns?: readonly string[] | undefined;
  readonly format: ExportFormat;
  /** CSV: write text cells that start like a formula as they are (default: prefixed with `'`, output/csv.ts). */
  readonly rawCsvCells?: boolean | undefined;
  /** null: stdout (csv and jsonl only). */
  readonly out: string | null;
  readonly stdout: Writable;
  readonly writeNote: (line: string) => void;
}

interface TableColumn {
  name: string;
  type: string;
  notnull: number;
}

const CHUNK_ROWS = 10_000;
const PARQUET_ROW_GROUP = 100_000;

function tableColumns(db: ProjectionDb, table: string): TableColumn[] {
  const tables = (
    db
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[]
  ).map((row) => row.name);
  if (!tables.includes(table)) {
    throw new UsageError(`no table ${JSON.stringify(table)} here; tables: ${tables.join(', ')}`);
  }
  return db.prepare('SELECT name, type, "notnull" FROM pragma_table_info(?)').all(table) as TableColumn[];
}

function chooseColumns(all: readonly TableColumn[], wanted: readonly string[] | undefined): TableColumn[] {
  if (wanted === undefined) return all.filter((column) => column.name !== '_json');
  return wanted.map((name) => {
    const column = all.find((c) => c.name === name);
    if (!column)
      throw new UsageError(
        `no column ${JSON.stringify(name)}; columns: ${all.map((c) => c.name).join(', ')}`,
      );
    return column;
  });
}

function parquetColumn(column: TableColumn): ParquetColumn {
  const type = column.type.toUpperCase();
  const kind = type.includes('INT')
    ? 'int64'
    : type === 'REAL' || type.includes('FLOA') || type.includes('DOUB')
      ? 'double'
      : 'string';
  return { name: column.name, kind, nullable: column.notnull === 0 };
}

export async function exportTable(options: ExportOptions): Promise<{ rows: number }> {
  const { db, table, format } = options;
  const columns = chooseColumns(tableColumns(db, table), options.columns);
  if (format === 'parquet' && options.out === null) throw new UsageError('--format parquet needs --out FILE');
  const partial = options.out === null ? null : `${options.out}.partial-${process.pid}`;
  const select = `SELECT ${columns.map((c) => quoteIdent(c.name)).join(', ')} FROM ${quoteIdent(table)}`;

  let rows: IterableIterator<unknown[]> | undefined;
  db.exec('BEGIN');
  try {
    const total = (db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(table)}`).get() as { n: number }).n;
    const progress = createProgress({ label: `export ${table}`, total, write: options.writeNote });
    // Parquet's INT64 wants bigint; CSV and JSON want plain numbers (exact below 2^53).
    rows = db
      .prepare(select)
      .raw(true)
      .safeIntegers(format === 'parquet')
      .iterate() as IterableIterator<unknown[]>;
    let pending = 0;
    if (format === 'parquet' && partial !== null) {
      const sink = new ParquetSink(partial, columns.map(parquetColumn), PARQUET_ROW_GROUP, [
        { key: 'pda.source', value: options.label },
        { key: 'pda.table', value: table },
      ]);
      for (const row of rows) {
        sink.add(row);
        if (++pending === CHUNK_ROWS) {
          progress.add(pending);
          pending = 0;
        }
      }
      sink.finish();
      progress.add(pending);
    } else {
      const stream = partial === null ? options.stdout : createWriteStream(partial);
      const names = columns.map((c) => c.name);
      const csv = { neutralise: options.rawCsvCells !== true };
      let text = format === 'csv' ? csvRecord(names, csv) : '';
      for (const row of rows) {
        text +=
          format === 'csv'
            ? csvRecord(row, csv)
            : `${JSON.stringify(Object.fromEntries(names.map((n, i) => [n, row[i]])))}\n`;
        if (++pending === CHUNK_ROWS) {
          await write(stream, text);
          progress.add(pending);
          text = '';
          pending = 0;
        }
      }
      await write(stream, text);
      progress.add(pending);
      if (partial !== null) {
        stream.end();
        await finished(stream);
      }
    }
    if (partial !== null && options.out !== null) renameSync(partial, options.out);
    return { rows: progress.done(options.out === null ? '' : ` → ${options.out}`) };
  } catch (error) {
    if (partial !== null) rmSync(partial, { force: true });
    throw error;
  } finally {
    rows?.return?.();
    if (db.inTransaction) db.exec('COMMIT');
  }
}
