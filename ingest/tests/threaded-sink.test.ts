import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createPipeline } from '../src/apply/pipeline.ts';
import { createThreadedSink } from '../src/apply/threaded-sink.ts';
import { createDecoder } from '../src/decode/index.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { dumpDataDir } from './support/dump.ts';
import { fixtureRecords } from './support/fixtures.ts';

const records = fixtureRecords();

describe.skipIf(records.length === 0)('apply thread', () => {
  it('applies the same batches to the same projection as the synchronous store, in order', async () => {
    const reference = tempDataDir();
    applyRecords(reference, records, 5);

    const dataDir = tempDataDir();
    const sink = createThreadedSink({ dataDir });
    const pipeline = createPipeline({
      decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
      asyncSink: sink,
      metrics: createMetrics(),
      logger: pino({ level: 'silent' }),
    });
    // Several batches in flight at once, as the consumer pipelines them: order must be kept.
    const inFlight = [];
    for (let i = 0; i < records.length; i += 5)
      inFlight.push(pipeline.apply(pipeline.prepare(records.slice(i, i + 5))));
    const summaries = await Promise.all(inFlight);
    await sink.close();
    expect(summaries.reduce((n, s) => n + s.deadLettered, 0)).toBe(0);
    expect(dumpDataDir(dataDir)).toEqual(dumpDataDir(reference));
  });

  it('a batch the thread cannot apply rejects; the thread keeps serving the next batch', async () => {
    const sink = createThreadedSink({ dataDir: tempDataDir() });
    // A change that is not structurally a Change makes applyBatch throw inside the thread.
    await expect(sink.applyBatch([{ kind: 'bogus' } as never])).rejects.toThrow(/apply thread/);
    await expect(sink.applyBatch([])).resolves.toMatchObject({ applied: 0 });
    await sink.close();
  });
});
