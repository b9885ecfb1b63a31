import { Writable } from 'node:stream';
import { openCompanyReader } from '@pda/projections/read';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadedSink } from '../src/apply-thread/threaded-sink.ts';
import { createLogger } from '../src/logger.ts';
import { uuidFor } from '../src/testing/index.ts';
import { startTombstonePruner } from '../src/upkeep/tombstone-pruner.ts';
import { tempDataDir } from './support/apply.ts';

// Tombstone retention (ingest/README.md, "Tombstone retention"): passes through the one writer
// (the apply thread, or the store on the main thread), one log line per pass, the horizon the api
// answers 410 from moved up. Tombstones are made two hours old with the store's injected clock;
// the apply thread runs on the wall clock.

const HOUR_MS = 3_600_000;
const COMPANIES = [uuidFor(1, 1), uuidFor(1, 2), uuidFor(1, 3)];

/** 3 companies × 5 sites deleted two hours ago, plus one deleted now in the first company. */
function oldTombstones(): string {
  const dataDir = tempDataDir('ingest-prune-');
  const twoHoursAgo = (Date.now() - 2 * HOUR_MS) * 1000;
  const store = ProjectionStore.open({ dataDir, clockUs: () => twoHoursAgo });
  let lsn = 1;
  const ids = COMPANIES.flatMap((companyId, c) =>
    [1, 2, 3, 4, 5].map((n) => ({ companyId, id: uuidFor(2, c * 10 + n) })),
  );
  store.applyBatch(
    ids.map(({ companyId, id }) =>
      makeUpsert('sites', sampleRow('sites', { id, company_id: companyId }), lsn++),
    ),
  );
  store.applyBatch(ids.map(({ id }) => makeDelete('sites', { id }, lsn++)));
  store.close();
  const recent = ProjectionStore.open({ dataDir });
  recent.applyBatch([
    makeUpsert('sites', sampleRow('sites', { id: uuidFor(3, 1), company_id: COMPANIES[0]! }), lsn++),
  ]);
  recent.applyBatch([makeDelete('sites', { id: uuidFor(3, 1) }, lsn++)]);
  recent.close();
  return dataDir;
}

function tombstones(dataDir: string, companyId: string): { count: number; since: number } {
  const db = openCompanyReader(dataDir, companyId);
  try {
    return {
      count: db.prepare('SELECT count(*) FROM tombstones').pluck().get() as number,
      since: db.prepare('SELECT tombstones_since_us FROM meta').pluck().get() as number,
    };
  } finally {
    db.close();
  }
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger('info', 'ingest', stream), lines };
}

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('tombstone pruner', () => {
  it('through the apply thread: deletes what is older than the window, keeps the rest, one log line per pass', async () => {
    const dataDir = oldTombstones();
    const sink = createThreadedSink({ dataDir });
    closers.push(() => sink.close());
    const { logger, lines } = capture();
    const started = Date.now();
    const pruner = startTombstonePruner({
      step: (options, cursor) => sink.pruneTombstones(options, cursor),
      retentionMs: HOUR_MS,
      intervalMs: 0,
      logger,
    });
    closers.push(() => pruner.stop());

    const summary = await pruner.runPass();
    expect(summary).toMatchObject({ pruned: 15, filesVisited: 3, filesPruned: 3 });
    expect(tombstones(dataDir, COMPANIES[0]!).count).toBe(1);
    expect(tombstones(dataDir, COMPANIES[1]!).count).toBe(0);
    // The horizon is the cutoff: an hour before the pass (the api's 410 boundary).
    const since = tombstones(dataDir, COMPANIES[2]!).since;
    expect(since).toBeGreaterThanOrEqual((started - HOUR_MS) * 1000);
    expect(since).toBeLessThanOrEqual((Date.now() - HOUR_MS) * 1000);
    // Batches still apply through the same thread afterwards.
    await expect(sink.applyBatch([])).resolves.toMatchObject({ applied: 0 });

    const again = await pruner.runPass();
    expect(again.pruned).toBe(0);
    const logged = lines.filter((line) => line.msg === 'tombstones pruned');
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ pruned: 15, filesPruned: 3, complete: true });
    expect(lines).toHaveLength(2); // nothing per row or per file
  });

  it('on the main thread with the synchronous store, on a timer', async () => {
    const dataDir = oldTombstones();
    const store = ProjectionStore.open({ dataDir });
    closers.push(() => store.close());
    const { logger, lines } = capture();
    const pruner = startTombstonePruner({
      step: async (options, cursor) => store.pruneTombstones(options, cursor),
      retentionMs: HOUR_MS,
      intervalMs: 50,
      logger,
    });
    closers.push(() => pruner.stop());
    await expect
      .poll(() => lines.filter((line) => line.msg === 'tombstones pruned').length, { timeout: 5_000 })
      .toBeGreaterThan(0);
    await pruner.stop();
    expect(COMPANIES.map((companyId) => tombstones(dataDir, companyId).count)).toEqual([1, 0, 0]);
  });
});
