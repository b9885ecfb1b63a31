import { Writable } from 'node:stream';
import { ProjectionStore } from '@pda/projections/write';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { createDecoder, heartbeatTopic, type RawRecord } from '../src/decode/index.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { tempDataDir } from './support/apply.ts';
import { fixtureRecords } from './support/fixtures.ts';

// The one line per batch (pipeline.ts): info when the batch changed something, debug when it did
// not: a heartbeat every 10 s on a quiet source must not fill the log at the default level.

const PINO_DEBUG = 20;
const PINO_INFO = 30;

const heartbeat = (offset: number): RawRecord => ({
  topic: heartbeatTopic('pda'),
  partition: 0,
  offset: String(offset),
  key: '{"serverName":"pda"}',
  value: `{"ts_ms":${1_795_562_503_624 + offset * 10_000}}`,
});

let store: ProjectionStore | undefined;
afterEach(() => store?.close());

function pipelineWithLog(level: string) {
  const lines: { level: number; msg: string; applied?: number; ignored?: number }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  store = ProjectionStore.open({ dataDir: tempDataDir('ingest-log-level-') });
  const pipeline = createPipeline({
    decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
    sink: inProcessSink(store),
    metrics: createMetrics(),
    logger: pino({ level }, stream),
  });
  return { pipeline, lines: () => lines.filter((line) => line.msg === 'batch applied') };
}

describe("the 'batch applied' line", () => {
  it('is debug for a heartbeat-only batch and info for a batch that applied changes', async () => {
    const { pipeline, lines } = pipelineWithLog('debug');
    expect(await pipeline.process([heartbeat(1), heartbeat(2)])).toMatchObject({ applied: 0, ignored: 2 });
    await pipeline.apply(pipeline.prepare([heartbeat(3)]));
    const changes = fixtureRecords().slice(0, 5);
    expect((await pipeline.process(changes)).applied).toBeGreaterThan(0);
    expect(lines().map(({ level, applied, ignored }) => ({ level, applied, ignored }))).toEqual([
      { level: PINO_DEBUG, applied: 0, ignored: 2 },
      { level: PINO_DEBUG, applied: 0, ignored: 1 },
      { level: PINO_INFO, applied: expect.any(Number), ignored: expect.any(Number) },
    ]);
  });

  it('at the default level (info), heartbeats log nothing', async () => {
    const { pipeline, lines } = pipelineWithLog('info');
    for (let i = 0; i < 10; i++) await pipeline.process([heartbeat(i)]);
    expect(lines()).toEqual([]);
  });
});
