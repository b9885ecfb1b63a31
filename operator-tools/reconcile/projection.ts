// The projection's side of a reconcile: read-only handles on control.sqlite and the company files
// (the api's open path: version and representation checked), rows in key order by keyset batches
// (`WHERE key > last ORDER BY key LIMIT n`, each batch its own short read, so ingest's checkpoints
// are never held back for a whole table), bookkeeping columns left out except the stored `_json`.
import { readdirSync } from 'node:fs';
import {
  companiesDir,
  isUuid,
  type ProjectionDb,
  ProjectionNotFoundError,
  quoteIdent,
} from '@pda/projections/model';
import { openCompanyReader, openControlReader } from '@pda/projections/read';
import type { Values } from './compare.ts';
import type { TablePlan } from './tables.ts';

/** A rows filter: SQL over the table's own columns with `?` parameters. */
export interface ProjectionFilter {
  readonly where: string;
  readonly params: readonly unknown[];
}

export const ALL: ProjectionFilter = { where: '1', params: [] };

export class ProjectionFiles {
  readonly control: ProjectionDb;
  private readonly dataDir: string;

  /** Throws (ProjectionNotFoundError, …) when the data dir has no readable control.sqlite. */
  constructor(dataDir: string) {
    this.dataDir = dataDir;
    this.control = openControlReader(dataDir);
  }

  /** A company's file, or undefined when it has none (all its source rows are then missing). */
  company(companyId: string): ProjectionDb | undefined {
    try {
      return openCompanyReader(this.dataDir, companyId);
    } catch (error) {
      if (error instanceof ProjectionNotFoundError) return undefined;
      throw error;
    }
  }

  /** Companies with a file in companies/, sorted. */
  companyIds(): string[] {
    let names: string[];
    try {
      names = readdirSync(companiesDir(this.dataDir));
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ENOENT') return [];
      throw error;
    }
    return names
      .filter((name) => name.endsWith('.sqlite'))
      .map((name) => name.slice(0, -'.sqlite'.length))
      .filter(isUuid)
      .sort();
  }

  /**
   * The source time (ms) up to which ingest knows every change applied: the last Debezium heartbeat
   * it confirmed while caught up (ingest/README.md, "Freshness and heartbeats"). Not the last
   * change's commit time: the topics are applied independently, so that one says nothing of the
   * others. Null before the first confirmed heartbeat.
   */
  sourceCurrentAtMs(): number | null {
    const row = this.control
      .prepare('SELECT source_current_at_ms AS t FROM ingest_state WHERE lock = 1')
      .get() as { t: number | null } | undefined;
    return row?.t ?? null;
  }

  close(): void {
    this.control.close();
  }
}

function selectList(plan: TablePlan): string {
  const columns = plan.columns.map(quoteIdent);
  if (plan.render) columns.push('"_json"');
  return columns.join(', ');
}

/** The rows of `plan` in `db` matching `filter`, in key order, `batchRows` at a time. */
export function* projectionBatches(
  db: ProjectionDb | undefined,
  plan: TablePlan,
  filter: ProjectionFilter,
  batchRows: number,
): Generator<Values[]> {
  if (!db) return;
  const key = plan.key.map(quoteIdent).join(', ');
  const base = `SELECT ${selectList(plan)} FROM ${quoteIdent(plan.table)} WHERE (${filter.where})`;
  const first = db.prepare(`${base} ORDER BY ${key} LIMIT ${batchRows}`).raw();
  const next = db
    .prepare(
      `${base} AND (${key}) > (${plan.key.map(() => '?').join(', ')}) ORDER BY ${key} LIMIT ${batchRows}`,
    )
    .raw();
  let rows = first.all(...filter.params) as Values[];
  for (;;) {
    if (rows.length > 0) yield rows;
    if (rows.length < batchRows) return;
    const last = rows[rows.length - 1]!;
    rows = next.all(...filter.params, ...plan.keyIndexes.map((i) => last[i])) as Values[];
  }
}

/** The rows of `plan` in `db` matching `filter` whose id (rowId form) is one of `ids`. */
export function projectionRowsByIds(
  db: ProjectionDb | undefined,
  plan: TablePlan,
  filter: ProjectionFilter,
  ids: readonly string[],
): Values[] {
  if (!db || ids.length === 0) return [];
  const key = plan.key.map(quoteIdent).join(` || '/' || `);
  return db
    .prepare(
      `SELECT ${selectList(plan)} FROM ${quoteIdent(plan.table)} WHERE (${filter.where}) AND ${key} IN (SELECT value FROM json_each(?))`,
    )
    .raw()
    .all(...filter.params, JSON.stringify(ids)) as Values[];
}
