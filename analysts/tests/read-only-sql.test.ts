import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openReader } from '@pda/projections/model';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareReadOnly, refusalBeforePrepare } from '../src/sql/read-only-statement.ts';
import { runPda } from '../src/testing/run-pda.ts';

// The sql command's guards (docs/analysts.md, "What is safe"): a PRAGMA that sets something is
// refused before it is prepared, because SQLite applies the setting while it compiles the
// statement; and --timeout stops a query, also one inside a single long SQLite step.

let root: string;
let file: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-sql-'));
  file = join(root, 'file.sqlite');
  const db = new Database(file);
  db.exec("CREATE TABLE sites (id TEXT PRIMARY KEY, name TEXT); INSERT INTO sites VALUES ('a', 'A')");
  db.close();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What a refused statement could have changed on the connection. */
function settings(db: Database.Database): Record<string, unknown> {
  return Object.fromEntries(
    ['query_only', 'cache_size', 'busy_timeout', 'writable_schema', 'recursive_triggers', 'foreign_keys'].map(
      (name) => [name, db.pragma(name, { simple: true })],
    ),
  );
}

describe('PRAGMA setters are refused before prepare', () => {
  const SETTERS = [
    'PRAGMA query_only(0)',
    'PRAGMA query_only(OFF)',
    'PRAGMA main.query_only(0)',
    'PRAGMA main . query_only (0)',
    'PRAGMA "query_only"(0)',
    "PRAGMA 'query_only'(0)",
    'PRAGMA [query_only](0)',
    'PRAGMA /* a comment */ query_only /* another */ (0)',
    'pragma Query_Only(false)',
    'PRAGMA query_only = 0',
    'PRAGMA "main"."query_only" = 0',
    'EXPLAIN PRAGMA query_only(0)',
    'EXPLAIN QUERY PLAN PRAGMA query_only = 0',
    '-- a comment\nEXPLAIN PRAGMA cache_size(5)',
    'PRAGMA cache_size(5)',
    'PRAGMA busy_timeout(1)',
    'PRAGMA writable_schema(1)',
    'PRAGMA recursive_triggers(1)',
    'PRAGMA foreign_keys(1)',
    'PRAGMA table_info = sites',
  ];
  const READS = [
    'PRAGMA query_only',
    'PRAGMA main.cache_size',
    'PRAGMA table_info(sites)',
    "PRAGMA main.table_info('sites')",
    'PRAGMA index_list(sites)',
    'PRAGMA integrity_check(10)',
    'PRAGMA quick_check',
    'PRAGMA user_version;',
    'EXPLAIN QUERY PLAN SELECT * FROM sites',
    "SELECT * FROM pragma_table_info('sites')",
  ];

  it('every setter form is refused and leaves the connection as it was', () => {
    const db = openReader(file);
    try {
      const before = settings(db);
      expect(before.query_only).toBe(1);
      for (const sql of SETTERS) {
        expect(refusalBeforePrepare(sql), sql).toMatch(/^a PRAGMA that sets a value is refused/);
        expect(() => prepareReadOnly(db, sql), sql).toThrow(/a PRAGMA that sets a value is refused/);
        expect(settings(db), sql).toEqual(before);
      }
      for (const sql of READS) {
        expect(prepareReadOnly(db, sql).reader, sql).toBe(true);
        expect(settings(db), sql).toEqual(before);
      }
    } finally {
      db.close();
    }
  });

  it('is needed: preparing a setter form alone changes the connection (what the check prevents)', () => {
    const db = openReader(file);
    try {
      db.prepare('PRAGMA query_only(0)');
      expect(db.pragma('query_only', { simple: true })).toBe(0);
    } finally {
      db.close();
    }
  });

  it('the CLI answers a setter with a usage error, exit 2', async () => {
    const result = await runPda(['projections', 'sql', '--file', file, 'PRAGMA query_only(0)']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: a PRAGMA that sets a value is refused \(PRAGMA query_only\(…\)\)/);
  });
});

describe('sql --timeout', () => {
  // One SQLite step that never ends: count(*) returns its row only when the recursion stops.
  const ENDLESS = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n';

  /** Processes that still run the query: children of the CLI are started with its environment. */
  function queryProcessesOf(marker: string): number[] {
    const pids: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(marker))
          pids.push(Number(entry));
      } catch {
        // gone meanwhile, or not ours
      }
    }
    return pids;
  }

  it('stops a query inside one long step: exit 1 with one line, no process left behind', async () => {
    const marker = `PDA_TEST_MARKER=${root}`;
    const started = Date.now();
    const result = await runPda(['projections', 'sql', '--file', file, '--timeout', '1', ENDLESS], {
      PDA_TEST_MARKER: root,
    });
    const ms = Date.now() - started;
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(
      /^error: the query ran longer than --timeout 1 s and was stopped \(nothing was changed\);[^\n]*\n$/,
    );
    expect(result.stdout).toBe('');
    expect(ms).toBeLessThan(15_000);
    expect(queryProcessesOf(marker)).toEqual([]);
  });

  it('a query within its time prints its rows; --timeout 0 runs without a limit; a bad value is a usage error', async () => {
    const sql = 'SELECT name FROM sites';
    for (const timeout of ['5', '0']) {
      const result = await runPda([
        'projections',
        'sql',
        '--file',
        file,
        '--timeout',
        timeout,
        '--format',
        'json',
        sql,
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual([{ name: 'A' }]);
    }
    const error = await runPda(['projections', 'sql', '--file', file, '--timeout', 'soon', sql]);
    expect(error.code).toBe(2);
    expect(error.stderr).toMatch(/^error: --timeout must be a whole number >= 0, got "soon"\n/);
    const sqlError = await runPda(['projections', 'sql', '--file', file, 'SELECT nope FROM sites']);
    expect(sqlError.code).toBe(1);
    expect(sqlError.stderr).toBe('error: SQL error: no such column: nope\n');
  });
});
