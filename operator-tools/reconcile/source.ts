// PostgreSQL's side of a reconcile: one REPEATABLE READ, READ ONLY transaction per company (a
// consistent snapshot whose WAL position and time are recorded), rows streamed through a cursor in
// primary-key order, a batch per FETCH, in the projection's representation (tables.ts).
import pg from 'pg';
import type { Values } from './compare.ts';
import { sourceSelectList, type TablePlan } from './tables.ts';
import type { SourcePosition } from './types.ts';

/** A rows filter: SQL over the table's own columns with $1… parameters. */
export interface SourceFilter {
  readonly where: string;
  readonly params: readonly unknown[];
}

export interface Snapshot extends SourcePosition {
  /** PostgreSQL's clock (ms since the epoch) when the snapshot was taken. */
  readonly atMs: number;
}

/** A connected client, from a pool or made here; `release` gives it back or ends it. */
export async function connectSource(
  source: pg.Pool | pg.ClientConfig,
): Promise<{ client: pg.ClientBase; release: () => Promise<void> }> {
  if (source instanceof pg.Pool) {
    const client = await source.connect();
    return { client, release: async () => client.release() };
  }
  const client = new pg.Client({ application_name: 'pda-reconcile', ...source });
  // An unreachable server after connect (a restart mid-run) surfaces as the failing query's error.
  client.on('error', () => {});
  await client.connect();
  return { client, release: () => client.end() };
}

/** Parses a `X/Y` LSN into a comparable number. */
export function lsnValue(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (!match) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

export class SourceReader {
  private cursors = 0;

  private readonly client: pg.ClientBase;
  private readonly selectLists: ReadonlyMap<string, string>;
  /** Per table, its column types (casts of keyset parameters). */
  private readonly types: ReadonlyMap<string, ReadonlyMap<string, string>>;
  private readonly schema: string;

  private constructor(
    client: pg.ClientBase,
    selectLists: ReadonlyMap<string, string>,
    types: ReadonlyMap<string, ReadonlyMap<string, string>>,
    schema: string,
  ) {
    this.client = client;
    this.selectLists = selectLists;
    this.types = types;
    this.schema = schema;
  }

  /** Reads the captured tables' column types once (the select lists depend on them). */
  static async load(
    client: pg.ClientBase,
    plans: readonly TablePlan[],
    schema = 'public',
  ): Promise<SourceReader> {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
    const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = ANY($2)`,
      [schema, plans.map((plan) => plan.table)],
    );
    const types = new Map<string, Map<string, string>>();
    for (const row of rows) {
      let table = types.get(row.table_name);
      if (!table) {
        table = new Map();
        types.set(row.table_name, table);
      }
      table.set(row.column_name, row.data_type);
    }
    const selectLists = new Map(
      plans.map((plan) => [plan.table, sourceSelectList(plan, types.get(plan.table) ?? new Map())]),
    );
    return new SourceReader(client, selectLists, types, schema);
  }

  /**
   * Starts a snapshot: every read until `end()` sees the database as of this moment. The position is
   * the WAL insert position (on a standby: the replay position) read by the snapshot's first
   * statement, so every commit the snapshot sees is below it.
   */
  async begin(): Promise<Snapshot> {
    // One round trip (a simple query of two statements): a company is one snapshot, and with
    // thousands of small companies the round trips are most of the time.
    const results = (await this.client.query(
      `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
       SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn,
              floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS at_ms`,
    )) as unknown as pg.QueryResult<{ lsn: string; at_ms: number }>[];
    const row = results[1]?.rows[0];
    if (!row) {
      await this.end();
      throw new Error('PostgreSQL returned no WAL position');
    }
    return { lsn: row.lsn, atMs: row.at_ms, at: new Date(row.at_ms).toISOString() };
  }

  /** Ends the snapshot (it only read). */
  async end(): Promise<void> {
    await this.client.query('ROLLBACK');
  }

  /** The companies PostgreSQL holds, sorted. */
  async companyIds(): Promise<string[]> {
    const { rows } = await this.client.query<{ id: string }>(
      `SELECT id::text AS id FROM "${this.schema}".companies ORDER BY id`,
    );
    return rows.map((row) => row.id);
  }

  /** The keys granted to any of `companies`. */
  async grantedKeys(companies: readonly string[]): Promise<string[]> {
    const { rows } = await this.client.query<{ id: string }>(
      `SELECT DISTINCT api_key_id::text AS id FROM "${this.schema}".api_key_companies WHERE company_id = ANY($1::uuid[])`,
      [companies],
    );
    return rows.map((row) => row.id);
  }

  /**
   * The rows of `plan` matching `filter`, in key order, `batchRows` at a time (inside a snapshot).
   * The first batch is a plain query (one round trip: most companies' tables fit in it); the rest
   * comes through a cursor that starts after the first batch's last key, a FETCH per batch.
   */
  async *rows(plan: TablePlan, filter: SourceFilter, batchRows: number): AsyncGenerator<Values[]> {
    const order = plan.key.map((column) => `"${column}"`).join(', ');
    const from = `SELECT ${this.selectList(plan)} FROM "${this.schema}"."${plan.table}" WHERE (${filter.where})`;
    const first = await this.client.query<unknown[]>({
      text: `${from} ORDER BY ${order} LIMIT ${batchRows}`,
      values: [...filter.params],
      rowMode: 'array',
    });
    if (first.rows.length > 0) yield first.rows;
    if (first.rows.length < batchRows) return;
    const last = first.rows[first.rows.length - 1]!;
    const types = this.types.get(plan.table);
    const after = plan.key
      .map((column, i) => `$${filter.params.length + i + 1}::${types?.get(column) ?? 'text'}`)
      .join(', ');
    const cursor = `reconcile_${++this.cursors}`;
    await this.client.query(
      `DECLARE ${cursor} NO SCROLL CURSOR FOR ${from} AND (${order}) > (${after}) ORDER BY ${order}`,
      [...filter.params, ...plan.keyIndexes.map((i) => last[i])],
    );
    try {
      for (;;) {
        const { rows } = await this.client.query<unknown[]>({
          text: `FETCH ${batchRows} FROM ${cursor}`,
          rowMode: 'array',
        });
        if (rows.length > 0) yield rows;
        if (rows.length < batchRows) return;
      }
    } finally {
      await this.client.query(`CLOSE ${cursor}`);
    }
  }

  /** The rows of `plan` matching `filter` whose id (rowId form) is one of `ids`. */
  async rowsByIds(plan: TablePlan, filter: SourceFilter, ids: readonly string[]): Promise<Values[]> {
    const n = filter.params.length + 1;
    const key =
      plan.key.length === 1
        ? `"${plan.key[0]}" = ANY($${n}::uuid[])`
        : `(${plan.key.map((column) => `"${column}"::text`).join(` || '/' || `)}) = ANY($${n}::text[])`;
    const { rows } = await this.client.query<unknown[]>({
      text: `SELECT ${this.selectList(plan)} FROM "${this.schema}"."${plan.table}" WHERE (${filter.where}) AND ${key}`,
      values: [...filter.params, ids],
      rowMode: 'array',
    });
    return rows;
  }

  private selectList(plan: TablePlan): string {
    const list = this.selectLists.get(plan.table);
    if (list === undefined) throw new Error(`no select list for ${plan.table}`);
    return list;
  }
}
