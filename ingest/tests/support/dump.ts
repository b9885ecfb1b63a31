/**
 * Every row of every projection file in a data directory, as plain objects, for equality checks.
 * Writer-assigned change times (_changed_us, last_changed_us) and wall-clock columns are dropped:
 * they legitimately differ between two runs that apply the same changes.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const VOLATILE = new Set([
  '_changed_us',
  'last_changed_us',
  'tombstones_since_us',
  'created_us',
  'recorded_at_ms',
  'last_batch_at_ms',
  'seq',
]);
// routes._src_lsn records the change at which a row was first routed: with a different arrival
// order that is a different (equally valid) change of the same row.
const VOLATILE_IN: Record<string, string> = { routes: '_src_lsn' };
const SKIP_TABLES = new Set(['ingest_state', 'sqlite_sequence']);

export type Dump = Record<string, Record<string, unknown[]>>;

function dumpFile(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      if (SKIP_TABLES.has(name)) continue;
      const rows = db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      out[name] = rows
        .map((r) =>
          Object.fromEntries(Object.entries(r).filter(([k]) => !VOLATILE.has(k) && VOLATILE_IN[name] !== k)),
        )
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    }
    return out;
  } finally {
    db.close();
  }
}

export function dumpDataDir(dataDir: string): Dump {
  const dump: Dump = { control: dumpFile(join(dataDir, 'control.sqlite')) };
  const companies = join(dataDir, 'companies');
  if (existsSync(companies)) {
    for (const f of readdirSync(companies)
      .filter((n) => n.endsWith('.sqlite'))
      .sort()) {
      dump[f.replace(/\.sqlite$/, '')] = dumpFile(join(companies, f));
    }
  }
  return dump;
}

/** Rows of one table in one file (sorted), or [] when the file does not exist. */
export function rowsOf(dataDir: string, file: string, table: string): Record<string, unknown>[] {
  const path =
    file === 'control' ? join(dataDir, 'control.sqlite') : join(dataDir, 'companies', `${file}.sqlite`);
  if (!existsSync(path)) return [];
  return (dumpFile(path)[table] ?? []) as Record<string, unknown>[];
}
