// Fault campaign, the read side under partner load (docs/resilience.md). A partner's company of 600
// sites is paged through again and again (`GET /v1/sites`, 20 per page, following links.next) by
// clients that never retry and by one that retries like @pda/client, while a continuous writer
// changes other companies and one ingest process applies them:
// 1. one api process restarted (SIGTERM, then a new process on the same port): the requests that
//    fail meanwhile are counted — a single process cannot restart without a gap;
// 2. two api processes on one port (API_REUSE_PORT=true, SO_REUSEPORT) restarted one at a time:
//    the other one answers meanwhile;
// 3. a projection rebuild (ingest's `rebuild` command) swapped in under the api and the live ingest
//    while the partners page: no request fails, no cursor is refused, and every pass holds each of
//    the company's ids exactly once.
// At the end every company's rows equal PostgreSQL's, in the rebuilt generation.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { type LoadSummary, startPagingLoad } from '../src/paging-load.ts';
import { pause } from '../src/pause.ts';
import { issueKey } from '../src/read-side.ts';
import { repoRoot, waitFor } from '../src/stack-env.ts';
import { type ApiProcess, startApi } from './support/api-process.ts';
import { settledComparison } from './support/compare.ts';
import { type IngestProcess, ingestEnv, startIngest } from './support/ingest-process.ts';
import { caseRecord } from './support/result.ts';
import {
  committedChanges,
  createCompanies,
  faultTolerantPool,
  startContinuousWriter,
  writerRecord,
} from './support/writer.ts';

const SITES = 600;

describe('fault: the api restarted and a rebuild swapped in while partners page', () => {
  const pool = faultTolerantPool();
  const root = mkdtempSync(join(tmpdir(), 'fault-api-'));
  // The data directory is a symlink to a generation, as `rebuild` requires (ingest/README.md, "Rebuild").
  const dataDir = join(root, 'data');
  const groupId = `e2e-fault-api-${randomUUID()}`;
  const secret = randomBytes(32).toString('hex');
  const apis: ApiProcess[] = [];
  const others: ChildProcess[] = [];
  let ingest: IngestProcess | undefined;
  afterAll(async () => {
    for (const api of apis) if (api.alive()) await api.kill9();
    for (const child of others) if (child.exitCode === null) child.kill('SIGKILL');
    if (ingest?.alive()) await ingest.kill9();
    await pool.end();
  });

  const api = (port: number, reusePort: boolean) => {
    const p = startApi({
      API_DATA_DIR: dataDir,
      API_PORT: String(port),
      API_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      API_CURSOR_SECRET: secret,
      API_RATE_LIMIT_MAX: '1000000',
      API_REUSE_PORT: String(reusePort),
    });
    apis.push(p);
    return p;
  };

  it('restarts and a swap under paging partners: failures counted, no cursor broken, pages complete', async () => {
    // One test, two records: both carry this test's outcome.
    const records = { restart: caseRecord('api-restart'), swap: caseRecord('rebuild-swap') };
    mkdirSync(join(root, 'data.generations', 'g0'), { recursive: true });
    symlinkSync(join('data.generations', 'g0'), dataDir);
    const [partner] = await createCompanies(pool, 'api-partner', 1, 0);
    const [company, other] = (await createCompanies(pool, 'api-writer', 2, 20)) as [string, string];
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO sites (company_id, name, area) SELECT $1, 'Partner lot ' || g, g * 1.5
         FROM generate_series(1, $2::int) g RETURNING id`,
      [partner, SITES],
    );
    const expectedIds = new Set(rows.map((r) => r.id));
    const apiKey = await issueKey(pool, partner as string, ['sites:read'], 'fault campaign partner');

    ingest = startIngest({ dataDir, groupId });
    await ingest.caughtUpSeconds(240_000);
    const writer = startContinuousWriter(pool, { company, other });

    const load = (baseUrl: string) => {
      const common = {
        baseUrl,
        keys: [apiKey],
        expectedIds,
        path: '/v1/sites?limit=20',
        pauseMs: 40,
        finishWalkOnStop: true,
      };
      return [
        startPagingLoad({ ...common, attempts: 1 }),
        startPagingLoad({ ...common, attempts: 1 }),
        startPagingLoad({ ...common, attempts: 6 }),
      ];
    };
    const figures = async (loads: ReturnType<typeof load>) => {
      const [a, b, retrying] = (await Promise.all(loads.map((l) => l.stop()))) as [
        LoadSummary,
        LoadSummary,
        LoadSummary,
      ];
      const failures: Record<string, number> = {};
      for (const f of [a, b])
        for (const [k, n] of Object.entries(f.failuresByKind)) failures[k] = (failures[k] ?? 0) + n;
      const passes = [...a.passes, ...b.passes, ...retrying.passes];
      // Failed = no answer or a 5xx (after the retries); a refused cursor (4xx) is counted apart.
      return {
        requests: a.requests + b.requests + retrying.requests,
        failedWithoutRetry: a.failed - a.refused + (b.failed - b.refused),
        failuresWithoutRetry: failures,
        failedWithRetry: retrying.failed - retrying.refused,
        retries: retrying.retries,
        cursorErrors: a.refused + b.refused + retrying.refused,
        passes,
        incompletePasses: passes.filter((p) => p.missing + p.duplicates + p.unexpected > 0).length,
      };
    };
    /** SIGTERM, wait for the exit, a new process on the same port, wait until it listens. */
    const restart = async (old: ApiProcess, port: number, reusePort: boolean) => {
      const stoppedAt = Date.now();
      const code = await old.stop();
      const next = api(port, reusePort);
      await next.ready();
      return { exitCode: code, gapSeconds: (Date.now() - stoppedAt) / 1000, next };
    };

    // ---- 1. one api process restarted ----
    const portA = await freePort();
    let single = api(portA, false);
    await single.ready();
    await waitFor('the partner key projected', async () => {
      const r = await fetch(`http://127.0.0.1:${portA}/v1/me`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return r.status === 200;
    });
    let loads = load(`http://127.0.0.1:${portA}`);
    await pause(2_000);
    const singleRestart = await restart(single, portA, false);
    single = singleRestart.next;
    await pause(2_000);
    const one = await figures(loads);
    await single.stop();

    // ---- 2. two processes on one port, restarted one at a time ----
    const portB = await freePort();
    let first = api(portB, true);
    let second = api(portB, true);
    await Promise.all([first.ready(), second.ready()]);
    loads = load(`http://127.0.0.1:${portB}`);
    await pause(2_000);
    const r1 = await restart(first, portB, true);
    first = r1.next;
    await pause(2_000);
    const r2 = await restart(second, portB, true);
    second = r2.next;
    await pause(2_000);
    const two = await figures(loads);

    // ---- 3. a rebuild swapped in while the partners page (through the two processes) ----
    loads = load(`http://127.0.0.1:${portB}`);
    const before = realpathSync(dataDir);
    const rebuildStarted = Date.now();
    const rebuild = spawn(
      process.execPath,
      ['--max-semi-space-size=64', '--disable-warning=TimeoutNegativeWarning', 'src/rebuild-main.ts'],
      {
        env: { ...process.env, ...ingestEnv({ dataDir, groupId }), INGEST_LOG_LEVEL: 'warn' },
        cwd: join(repoRoot, 'ingest'),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    others.push(rebuild);
    let rebuildOutput = '';
    rebuild.stdout?.on('data', (c: Buffer) => {
      rebuildOutput += c.toString('utf8');
    });
    rebuild.stderr?.on('data', (c: Buffer) => {
      rebuildOutput += c.toString('utf8');
    });
    const swappedAt = await waitFor(
      'the rebuilt generation swapped in',
      () => {
        if (rebuild.exitCode !== null && rebuild.exitCode !== 0)
          throw new Error(`rebuild failed: ${rebuildOutput}`);
        return realpathSync(dataDir) !== before ? Date.now() : false;
      },
      { timeoutMs: 300_000, intervalMs: 50 },
    );
    const rebuildExit = await new Promise<number | null>((resolve) =>
      rebuild.exitCode !== null ? resolve(rebuild.exitCode) : rebuild.once('exit', (code) => resolve(code)),
    );
    // Past the api's reopen check (API_REOPEN_CHECK_MS, 1 s) and a whole pass more.
    await pause(4_000);
    const swap = await figures(loads);
    const acrossSwap = swap.passes.filter((p) => p.startedAt < swappedAt + 1_000 && p.endedAt > swappedAt);

    const summary = await writer.stop();
    await ingest.caughtUpSeconds(180_000);
    const comparison = await settledComparison(pool, dataDir, [partner as string, company, other], {
      timeoutMs: 90_000,
    });
    const ingestExit = await ingest.stop();
    const exits = [await first.stop(), await second.stop()];

    records.restart.set({
      fault:
        'the api restarted (SIGTERM, new process on the same port) under 3 paging partners: one process; then two processes on one port (API_REUSE_PORT) restarted one at a time',
      whatHappened: `one process: ${one.failedWithoutRetry} of ${one.requests} requests failed without retry (${JSON.stringify(one.failuresWithoutRetry)}) during a ${singleRestart.gapSeconds.toFixed(2)} s gap, ${one.failedWithRetry} with retries (${one.retries} retries); two processes: ${two.failedWithoutRetry} of ${two.requests} failed without retry (${JSON.stringify(two.failuresWithoutRetry)}), ${two.failedWithRetry} with retries; ${one.cursorErrors + two.cursorErrors} cursors refused, ${one.incompletePasses + two.incompletePasses} incomplete passes of ${one.passes.length + two.passes.length}`,
      recoverySeconds: Math.round(singleRestart.gapSeconds * 100) / 100,
      differences: comparison.differences.length,
      failedRequests: two.failedWithoutRetry,
      oneProcess: { ...one, passes: one.passes.length, gapSeconds: singleRestart.gapSeconds },
      twoProcesses: { ...two, passes: two.passes.length, gapSeconds: [r1.gapSeconds, r2.gapSeconds] },
    });
    records.swap.set({
      fault:
        'ingest rebuild (new generation from the earliest offsets) swapped in under the api and the live ingest while 3 partners page through 600 sites with cursors',
      whatHappened: `rebuild swapped ${((swappedAt - rebuildStarted) / 1000).toFixed(1)} s after it started (exit ${rebuildExit}); ${swap.requests} requests, ${swap.failedWithoutRetry + swap.failedWithRetry} failed, ${swap.cursorErrors} cursors refused; ${acrossSwap.length} passes spanned the swap; ${swap.incompletePasses} of ${swap.passes.length} passes incomplete (missing/duplicate ids); ${comparison.rowsCompared} rows compared in the new generation`,
      recoverySeconds: 0,
      differences: comparison.differences.length,
      failedRequests: swap.failedWithoutRetry + swap.failedWithRetry,
      rebuildSeconds: (swappedAt - rebuildStarted) / 1000,
      passesAcrossSwap: acrossSwap.length,
      ...swap,
      passes: swap.passes.length,
      writer: writerRecord(summary),
      sampleDifferences: comparison.differences.slice(0, 10),
    });

    // The single process's gap is measured, not judged: it exists by construction. A client that
    // retries rides it out; two processes on one port have no gap at all (docs/resilience.md,
    // api/README.md `API_REUSE_PORT`).
    expect(one.failedWithRetry, 'one process: requests failed with retries').toBe(0);
    expect(one.cursorErrors + one.incompletePasses, 'one process: cursors refused + incomplete passes').toBe(
      0,
    );
    expect(two.failedWithoutRetry, 'two processes: requests failed without retry').toBe(0);
    expect(two.failedWithRetry, 'two processes: requests failed with retries').toBe(0);
    expect(
      two.cursorErrors + two.incompletePasses,
      'two processes: cursors refused + incomplete passes',
    ).toBe(0);
    expect(rebuildExit).toBe(0);
    expect(acrossSwap.length).toBeGreaterThan(0);
    expect(swap.failedWithoutRetry + swap.failedWithRetry + swap.cursorErrors).toBe(0);
    expect(swap.incompletePasses).toBe(0);
    expect(comparison.differences).toEqual([]);
    // PostgreSQL stays up in this case: the writer commits throughout and no slice of it fails.
    expect(committedChanges(summary), 'changes the writer committed').toBeGreaterThan(20);
    expect(summary.failedSlices, `writer slices that failed (first: ${summary.firstSliceError})`).toBe(0);
    expect([ingestExit, ...exits, singleRestart.exitCode, r1.exitCode, r2.exitCode]).toEqual([
      0, 0, 0, 0, 0, 0,
    ]);
  }, 600_000);
});
