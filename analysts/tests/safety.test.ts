import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { companyPath, openReader } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareReadOnly } from '../src/sql/read-only-statement.ts';
import { PDA_MAIN, runPda } from '../src/testing/run-pda.ts';
import { seedProjection } from '../src/testing/seed-projection.ts';

// An analyst cannot stop ingest or change a projection file through this CLI (docs/analysts.md,
// "What is safe"): a long query on a live company file, a snapshot taken while ingest writes and a
// long query on that snapshot all leave the writer (ProjectionStore, as ingest uses it) committing
// batch after batch; and no statement or command modifies a file.

const SITES_PER_BATCH = 10;
/** A read that takes seconds on any machine here: a recursive count after reading the sites. */
const LONG_QUERY = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000)
SELECT (SELECT count(*) FROM sites) AS sites, (SELECT max(_changed_us) FROM sites) AS newest, count(*) AS steps FROM n`;

let root: string;
let dataDir: string;
let companyId: string;
let lsn = 1_000_000;

function value(path: string, sql: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
}

const count = (path: string, sql: string): number => Number(value(path, sql));

interface Commit {
  readonly ms: number;
  readonly at: number;
}

/**
 * Applies a batch of new sites every few ms while `child` runs, the way ingest applies a chunk:
 * one ProjectionStore.applyBatch, one transaction. Returns each commit's duration and end time.
 */
async function writeWhileRunning(child: ChildProcess, exited: Promise<unknown>): Promise<Commit[]> {
  const store = ProjectionStore.open({ dataDir });
  const commits: Commit[] = [];
  let running = true;
  void exited.then(() => {
    running = false;
  });
  try {
    while (running && child.exitCode === null) {
      const changes = Array.from({ length: SITES_PER_BATCH }, () =>
        makeUpsert(
          'sites',
          sampleRow('sites', { id: randomUUID(), company_id: companyId, name: 'Written during a read' }),
          ++lsn,
        ),
      );
      const started = performance.now();
      store.applyBatch(changes);
      commits.push({ ms: performance.now() - started, at: performance.now() });
      await sleep(20);
    }
  } finally {
    store.close();
  }
  return commits;
}

function startPda(args: readonly string[]): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; stdout: string; at: number }>;
} {
  const child = spawn(process.execPath, [PDA_MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', PDA_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; stdout: string; at: number }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, at: performance.now() })),
  );
  return { child, exited };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'pda-analysts-safety-'));
  dataDir = join(root, 'data');
  seedProjection(dataDir, {
    counts: {
      companies: 1,
      sites: 200,
      contactsPerSite: 1,
      services: 4,
      categories: 2,
      equipment: 4,
      consumables: 2,
    },
  });
  const control = new Database(join(dataDir, 'control.sqlite'), { readonly: true });
  companyId = String(control.prepare('SELECT id FROM companies').pluck().get());
  control.close();
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a long analyst query does not stop ingest', () => {
  it('on the live company file: batches keep committing while the query reads its own snapshot', async () => {
    const file = companyPath(dataDir, companyId);
    const { child, exited } = startPda([
      'projections',
      'sql',
      '--company',
      companyId,
      '--format',
      'json',
      LONG_QUERY,
    ]);
    const commits = await writeWhileRunning(child, exited);
    const { code, stdout, at: endedAt } = await exited;
    expect(code).toBe(0);
    const [answer] = JSON.parse(stdout) as { sites: number; newest: number }[];
    // The query saw one committed state: exactly the sites changed up to the newest it saw.
    expect(answer?.sites).toBe(
      count(file, `SELECT count(*) FROM sites WHERE _changed_us <= ${answer?.newest}`),
    );
    // Batches committed after the query's snapshot began and before it ended: while it read.
    const during =
      count(file, `SELECT count(*) FROM sites WHERE _changed_us > ${answer?.newest}`) / SITES_PER_BATCH;
    const committedBeforeEnd = commits.filter((commit) => commit.at < endedAt).length;
    expect(during).toBeGreaterThanOrEqual(3);
    expect(committedBeforeEnd).toBeGreaterThanOrEqual(3);
    // No commit waited on the reader (a lock would have held one for the busy timeout, 5 s).
    expect(Math.max(...commits.map((commit) => commit.ms))).toBeLessThan(1_000);
  });

  it('while a snapshot is taken, and on the snapshot: whole batches only, the writer never waits', async () => {
    const out = join(root, 'snapshot.sqlite');
    const base = count(companyPath(dataDir, companyId), 'SELECT count(*) FROM sites');
    const snapshot = startPda(['projections', 'snapshot', '--company', companyId, '--out', out]);
    const duringSnapshot = await writeWhileRunning(snapshot.child, snapshot.exited);
    expect((await snapshot.exited).code).toBe(0);
    expect(value(out, 'PRAGMA integrity_check')).toBe('ok');
    const copied = count(out, 'SELECT count(*) FROM sites');
    expect((copied - base) % SITES_PER_BATCH).toBe(0);
    expect(duringSnapshot.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...duringSnapshot.map((commit) => commit.ms))).toBeLessThan(1_000);

    const onSnapshot = startPda(['projections', 'sql', '--file', out, '--format', 'json', LONG_QUERY]);
    const commits = await writeWhileRunning(onSnapshot.child, onSnapshot.exited);
    const { code, stdout } = await onSnapshot.exited;
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { sites: number }[])[0]?.sites).toBe(copied);
    expect(commits.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...commits.map((commit) => commit.ms))).toBeLessThan(1_000);
  });
});

describe('the CLI cannot modify a projection file', () => {
  const WRITES = [
    "INSERT INTO sites (id) VALUES ('x')",
    "UPDATE sites SET name = 'x'",
    'DELETE FROM sites',
    'WITH gone AS (SELECT id FROM sites) DELETE FROM sites WHERE id IN (SELECT id FROM gone)',
    "ATTACH 'other.sqlite' AS other",
    'DETACH other',
    'PRAGMA user_version = 9',
    'PRAGMA journal_mode = DELETE',
    'PRAGMA query_only = OFF',
    'PRAGMA wal_checkpoint(TRUNCATE)',
    // Setter pragmas in parenthesis form: SQLite applies them while preparing (read-only-sql.test.ts).
    'PRAGMA query_only(0)',
    'PRAGMA main.query_only(OFF)',
    'EXPLAIN PRAGMA query_only(0)',
    'PRAGMA writable_schema(1)',
    'CREATE TABLE x (a)',
    'DROP TABLE sites',
    'VACUUM',
    'REINDEX',
    'ANALYZE',
    "VACUUM INTO 'copy.sqlite'",
    'SELECT 1; DELETE FROM sites',
    'BEGIN IMMEDIATE',
  ];

  it('refuses every statement that writes or changes the connection, before it runs', () => {
    const db = openReader(companyPath(dataDir, companyId));
    try {
      for (const sql of WRITES) expect(() => prepareReadOnly(db, sql), sql).toThrow();
      expect(db.pragma('query_only', { simple: true })).toBe(1);
      for (const sql of [
        'SELECT count(*) FROM sites',
        '  -- a comment\nWITH x AS (SELECT 1) SELECT * FROM x',
        'PRAGMA table_info(sites)',
        'EXPLAIN QUERY PLAN SELECT * FROM sites',
        'VALUES (1)',
      ]) {
        expect(prepareReadOnly(db, sql).reader, sql).toBe(true);
      }
      // And were the check bypassed, the connection itself is read-only.
      expect(() => db.prepare("UPDATE sites SET name = 'x'").run()).toThrow(/readonly|query_only/i);
    } finally {
      db.close();
    }
  });

  it("leaves the file's bytes unchanged, whatever the analyst runs", async () => {
    const file = companyPath(dataDir, companyId);
    const digest = (): string => createHash('sha256').update(readFileSync(file)).digest('hex');
    const walBytes = (): number => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    const before = digest();
    const results = await Promise.all(
      WRITES.map((sql) =>
        runPda(['projections', 'sql', '--company', companyId, sql], { PDA_DATA_DIR: dataDir }),
      ),
    );
    results.forEach((result, i) => {
      expect(result.code, WRITES[i]).toBe(2);
      expect(result.stderr, WRITES[i]).toMatch(/^error: /);
    });
    for (const args of [
      ['companies', '--json'],
      ['snapshot', '--company', companyId, '--out', join(root, 'bytes.sqlite')],
      ['snapshot', '--all', '--out', join(root, 'bytes-all.sqlite')],
      [
        'export',
        '--company',
        companyId,
        '--table',
        'sites',
        '--format',
        'parquet',
        '--out',
        join(root, 'bytes.parquet'),
      ],
      ['sql', '--company', companyId, 'SELECT count(*) FROM sites'],
    ]) {
      expect((await runPda(['projections', ...args], { PDA_DATA_DIR: dataDir })).code, args.join(' ')).toBe(
        0,
      );
    }
    expect(digest()).toBe(before);
    expect(walBytes()).toBe(0);
  });
});
