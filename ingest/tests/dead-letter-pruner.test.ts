import { Writable } from 'node:stream';
import { openControlReader } from '@pda/projections/read';
import { ProjectionStore } from '@pda/projections/write';
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadedSink } from '../src/apply-thread/threaded-sink.ts';
import { createLogger } from '../src/logger.ts';
import { startDeadLetterPruner } from '../src/upkeep/dead-letter-pruner.ts';
import { tempDataDir } from './support/apply.ts';

// Dead-letter retention (ingest/README.md, "Dead letters"): passes through the one writer (the
// apply thread, or the store on the main thread), in bounded steps, oldest first, one log line per
// pass that deleted something.

const letter = (n: number) => ({
  topic: 'pda.public.sites',
  partition: 0,
  offset: String(n),
  key: null,
  reason: 'not JSON',
});

function offsets(dataDir: string): number[] {
  const db = openControlReader(dataDir);
  try {
    return db.prepare('SELECT offset FROM dead_letters ORDER BY seq').pluck().all().map(Number);
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

describe('dead-letter pruner', () => {
  it('through the apply thread: the oldest beyond the cap go in bounded steps, one log line', async () => {
    const dataDir = tempDataDir('ingest-dead-letters-');
    const before = ProjectionStore.open({ dataDir });
    before.applyBatch([], { deadLetters: Array.from({ length: 7 }, (_, i) => letter(i + 1)) });
    before.close();
    const sink = createThreadedSink({ dataDir, deadLetters: { retentionMs: 86_400_000, maxRows: 2 } });
    closers.push(() => sink.close());
    const { logger, lines } = capture();
    const pruner = startDeadLetterPruner({
      step: (maxRows) => sink.pruneDeadLetters(maxRows),
      intervalMs: 0,
      logger,
      stepMaxRows: 2,
    });
    closers.push(() => pruner.stop());

    expect(await pruner.runPass()).toMatchObject({ pruned: 5, steps: 3 });
    expect(offsets(dataDir)).toEqual([6, 7]);
    // Batches still apply through the same thread afterwards.
    await expect(sink.applyBatch([])).resolves.toMatchObject({ applied: 0 });
    expect(await pruner.runPass()).toMatchObject({ pruned: 0, steps: 1 });
    expect(lines.filter((line) => line.msg === 'dead letters pruned')).toEqual([
      expect.objectContaining({ pruned: 5, steps: 3, complete: true }),
    ]);
    expect(lines).toHaveLength(1); // nothing for a pass with nothing to do, nothing per row
  });

  it('on the main thread with the synchronous store, on a timer: the ones older than the window go', async () => {
    const dataDir = tempDataDir('ingest-dead-letters-');
    const store = ProjectionStore.open({ dataDir, deadLetters: { retentionMs: 1, maxRows: 100 } });
    closers.push(() => store.close());
    store.applyBatch([], { deadLetters: [1, 2, 3].map(letter) });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { logger, lines } = capture();
    const pruner = startDeadLetterPruner({
      step: async (maxRows) => store.pruneDeadLetters(maxRows),
      intervalMs: 50,
      logger,
    });
    closers.push(() => pruner.stop());
    await expect
      .poll(() => lines.filter((line) => line.msg === 'dead letters pruned').length, { timeout: 5_000 })
      .toBeGreaterThan(0);
    await pruner.stop();
    expect(offsets(dataDir)).toEqual([]);
  });
});
