import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { TENANT_TABLES } from '../src/model/index.ts';
import { listCompanyFiles } from '../src/model/paths.ts';
import { openCompanyReader, openControlReader } from '../src/read/index.ts';
import type { ClockUs } from '../src/write/index.ts';

/** Fresh data directories, removed after each test. */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pda-projections-'));
  dirs.push(dir);
  return dir;
}

/** A clock that stands still unless told to move: change times then depend only on the +1 rule. */
export function fixedClock(startUs = 1_000_000): ClockUs & { set(us: number): void } {
  let now = startUs;
  const clock = () => now;
  const set = (us: number) => {
    now = us;
  };
  return Object.assign(clock, { set });
}

export const A = 'aaaaaaaa-0000-4000-8000-00000000000a';
export const B = 'bbbbbbbb-0000-4000-8000-00000000000b';
export const C = 'cccccccc-0000-4000-8000-00000000000c';

/** uuid n (deterministic, readable in failures). */
export function id(n: number): string {
  return `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
}

type Rows = Record<string, unknown>[];

/** Every row of a company table, ordered by id, optionally without the change time. */
export function companyRows(dataDir: string, companyId: string, table: string, withTime = false): Rows {
  const db = openCompanyReader(dataDir, companyId);
  try {
    const rows = db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all() as Rows;
    return withTime ? rows : rows.map(({ _changed_us, ...rest }) => rest);
  } finally {
    db.close();
  }
}

export function controlRows(dataDir: string, table: string): Rows {
  const db = openControlReader(dataDir);
  try {
    return db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all() as Rows;
  } finally {
    db.close();
  }
}

const COMPANY_TABLES = [...TENANT_TABLES, 'tombstones', 'truncations'];
const CONTROL_TABLES = ['companies', 'api_keys', 'api_key_companies', 'routes', 'tombstones', 'truncations'];

/** The whole data directory as plain data (change times dropped unless asked for). */
export function dump(dataDir: string, withTime = false): Record<string, Record<string, Rows>> {
  const out: Record<string, Record<string, Rows>> = {};
  out.control = Object.fromEntries(CONTROL_TABLES.map((t) => [t, controlRows(dataDir, t)]));
  for (const company of listCompanyFiles(dataDir).sort()) {
    out[company] = Object.fromEntries(
      COMPANY_TABLES.map((t) => [t, companyRows(dataDir, company, t, withTime)]),
    );
  }
  return out;
}
