/**
 * The source side of a soak (pipeline/soak.ts): the companies it creates in the stack's
 * PostgreSQL, a key for each, and a writer that commits `rate` changes per second to their sites
 * and services for the whole run — inserts, updates (each a new name: the projection's copy must
 * end with it) and deletes, around a steady population per company — in one transaction per tick
 * of 100 ms. A marker site gets a new name each sample: the time until the api serves it is the
 * sample's commit → visible.
 */
import { issueApiKey } from '@pda/operator-tools/keys';
import type pg from 'pg';

export interface SoakCompany {
  readonly id: string;
  readonly key: string;
  /** Written by the writer for the whole run; the quiet company is only read (its polls answer 304). */
  readonly busy: boolean;
}

export const SOAK_TABLES = ['sites', 'services'] as const;
export type SoakTable = (typeof SOAK_TABLES)[number];

/** Creates `busy` written companies and one quiet one, each with `seedRows` rows per table and a key. */
export async function createCompanies(
  pool: pg.Pool,
  run: string,
  busy: number,
  seedRows: number,
): Promise<SoakCompany[]> {
  const companies: SoakCompany[] = [];
  for (let i = 0; i <= busy; i++) {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO companies (name, currency) VALUES ($1, 'EUR') RETURNING id`,
      [`soak ${run} ${i}`],
    );
    const id = rows[0]?.id as string;
    for (let n = 0; n < seedRows; n++) {
      await pool.query(insertSql('sites'), [id, `seed ${n}`]);
      await pool.query(insertSql('services'), [id, `seed ${n}`]);
    }
    const client = await pool.connect();
    try {
      const { key } = await issueApiKey(client, {
        companyIds: [id],
        name: `soak ${run} ${i}`,
        scopes: ['sites:read', 'services:read'],
      });
      companies.push({ id, key, busy: i < busy });
    } finally {
      client.release();
    }
  }
  return companies;
}

function insertSql(table: SoakTable): string {
  return table === 'sites'
    ? 'INSERT INTO sites (company_id, name) VALUES ($1, $2) RETURNING id'
    : `INSERT INTO services (company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
         subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
       VALUES ($1, $2, 'hourly', 12.50, 'EUR', 'hourly', 10.00, 'EUR') RETURNING id`;
}

export interface WriterCounts {
  readonly committed: Record<string, number>;
  readonly transactions: number;
  /** Ticks that started late because the one before them took longer than the tick. */
  readonly lateTicks: number;
  readonly errors: number;
  readonly lastError: string | null;
}

export interface Writer {
  counts(): WriterCounts;
  /** Renames the marker site; resolves with the name once committed, and the commit's time. */
  mark(name: string): Promise<{ name: string; committedAt: number }>;
  readonly markerSite: string;
  readonly markerCompany: SoakCompany;
  stop(): Promise<void>;
}

const TICK_MS = 100;
/** Rows a busy company keeps per table around which inserts and deletes balance. */
const POPULATION = 300;

export async function startWriter(
  pool: pg.Pool,
  companies: readonly SoakCompany[],
  rate: number,
  markerCompany: SoakCompany,
): Promise<Writer> {
  const busy = companies.filter((c) => c.busy);
  const ids = new Map<string, string[]>();
  for (const c of busy) {
    for (const table of SOAK_TABLES) {
      const { rows } = await pool.query<{ id: string }>(`SELECT id FROM ${table} WHERE company_id = $1`, [
        c.id,
      ]);
      ids.set(
        `${c.id}/${table}`,
        rows.map((r) => r.id),
      );
    }
  }
  const marker = await pool.query<{ id: string }>(insertSql('sites'), [markerCompany.id, 'marker 0']);
  const markerSite = marker.rows[0]?.id as string;
  const committed: Record<string, number> = {};
  let transactions = 0;
  let lateTicks = 0;
  let errors = 0;
  let lastError: string | null = null;
  let sequence = 0;
  let running = true;
  const client = await pool.connect();

  const change = async (): Promise<string> => {
    const company = busy[Math.floor(Math.random() * busy.length)] as SoakCompany;
    const table = SOAK_TABLES[Math.floor(Math.random() * SOAK_TABLES.length)] as SoakTable;
    const list = ids.get(`${company.id}/${table}`) ?? [];
    const roll = Math.random();
    const insertShare = list.length < POPULATION ? 0.5 : 0.3;
    const name = `soak ${++sequence}`;
    if (roll < insertShare || list.length === 0) {
      const { rows } = await client.query<{ id: string }>(insertSql(table), [company.id, name]);
      list.push(rows[0]?.id as string);
      ids.set(`${company.id}/${table}`, list);
      return `${table} insert`;
    }
    const index = Math.floor(Math.random() * list.length);
    const id = list[index] as string;
    if (roll < 0.65) {
      await client.query(`UPDATE ${table} SET name = $2 WHERE id = $1`, [id, name]);
      return `${table} update`;
    }
    await client.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
    list.splice(index, 1);
    return `${table} delete`;
  };

  const perTick = rate * (TICK_MS / 1000);
  const loop = (async () => {
    let next = performance.now();
    let carry = 0;
    while (running) {
      carry += perTick;
      const n = Math.floor(carry);
      carry -= n;
      const done: string[] = [];
      try {
        await client.query('BEGIN');
        for (let i = 0; i < n; i++) done.push(await change());
        await client.query('COMMIT');
        transactions++;
        for (const op of done) committed[op] = (committed[op] ?? 0) + 1;
      } catch (error) {
        errors++;
        lastError = error instanceof Error ? error.message : String(error);
        await client.query('ROLLBACK').catch(() => {});
        // The rolled-back inserts and deletes: read the lists again.
        for (const c of busy)
          for (const table of SOAK_TABLES) {
            const { rows } = await client.query<{ id: string }>(
              `SELECT id FROM ${table} WHERE company_id = $1`,
              [c.id],
            );
            ids.set(
              `${c.id}/${table}`,
              rows.map((r) => r.id),
            );
          }
      }
      next += TICK_MS;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else {
        lateTicks++;
        next = performance.now();
      }
    }
  })();

  return {
    markerSite,
    markerCompany,
    counts: () => ({ committed: { ...committed }, transactions, lateTicks, errors, lastError }),
    mark: async (name) => {
      await pool.query('UPDATE sites SET name = $2 WHERE id = $1', [markerSite, name]);
      return { name, committedAt: performance.now() };
    },
    stop: async () => {
      running = false;
      await loop;
      client.release();
    },
  };
}

/** id → name of every row of the companies' `table` in PostgreSQL now. */
export async function sourceRows(
  pool: pg.Pool,
  table: SoakTable,
  companyId: string,
): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; name: string }>(
    `SELECT id, name FROM ${table} WHERE company_id = $1`,
    [companyId],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The soak's rows and companies leave PostgreSQL (and, through the pipeline, every projection). */
export async function removeCompanies(
  pool: pg.Pool,
  companies: readonly SoakCompany[],
  run: string,
): Promise<void> {
  const ids = companies.map((c) => c.id);
  for (const table of SOAK_TABLES) await pool.query(`DELETE FROM ${table} WHERE company_id = ANY($1)`, [ids]);
  await pool.query(`DELETE FROM api_keys WHERE name LIKE $1`, [`soak ${run} %`]);
  await pool.query('DELETE FROM companies WHERE id = ANY($1)', [ids]);
}
