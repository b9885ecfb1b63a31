import { ProjectionStore } from '@pda/projections/write';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { createDecoder } from '../src/decode/index.ts';
import { createMetrics, type IngestMetrics } from '../src/observability/metrics.ts';
import { tempDataDir } from './support/apply.ts';

// Dead letters per table (pda_ingest_events_total{outcome="dead_lettered", table}) as the alerts
// read them (operator-tools/monitoring/alerts.yml, PdaIngestApiKeyDeadLetter): every table's series exists at
// 0 from the start, so the first dead letter is an increase, and an api_keys event is counted
// under its own table.

let store: ProjectionStore | undefined;
afterEach(() => store?.close());

async function deadLettered(metrics: IngestMetrics): Promise<Record<string, number>> {
  const { values } = await metrics.events.get();
  return Object.fromEntries(
    values.filter((v) => v.labels.outcome === 'dead_lettered').map((v) => [String(v.labels.table), v.value]),
  );
}

describe('dead letters per table', () => {
  it('every table, api_keys and api_key_companies included, starts at 0', async () => {
    const metrics = createMetrics();
    expect(await deadLettered(metrics)).toMatchObject({ api_keys: 0, api_key_companies: 0, sites: 0 });
    expect(await metrics.registry.metrics()).toContain(
      'pda_ingest_events_total{table="api_keys",outcome="dead_lettered"} 0',
    );
  });

  it('an api_keys event that cannot be decoded counts 1 under table="api_keys"', async () => {
    const metrics = createMetrics();
    store = ProjectionStore.open({ dataDir: tempDataDir('ingest-dead-letter-metrics-') });
    const pipeline = createPipeline({
      decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
      sink: inProcessSink(store),
      metrics,
      logger: pino({ level: 'silent' }),
    });
    const summary = await pipeline.process([
      { topic: 'pda.public.api_keys', partition: 0, offset: '7', key: '{"id":"k"}', value: 'not json' },
    ]);
    expect(summary.deadLettered).toBe(1);
    expect(await deadLettered(metrics)).toMatchObject({ api_keys: 1, api_key_companies: 0, sites: 0 });
  });
});
