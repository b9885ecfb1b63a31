import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing } from '@pda/tracing';
import { describe, expect, it } from 'vitest';
import { changeStages } from '../pipeline/parts/trace-stages.ts';

// pipeline/parts/trace-stages.ts: a change's stages from the batch span tree ingest makes.
describe('changeStages', () => {
  it("splits each listed change of the company into its stages, from the spans' times", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: 'test', exporter, env: {} });
    const t0 = 1_800_000_000_000;
    const batch = tracing.tracer.startSpan(
      'ingest.batch',
      {
        startTime: t0 + 40,
        attributes: {
          'pda.change.company': ['a', 'b', 'a'],
          'pda.change.source_commit_ms': [t0, t0 + 5, t0 + 10],
        },
      },
      ROOT_CONTEXT,
    );
    const parent = trace.setSpan(ROOT_CONTEXT, batch);
    tracing.tracer.startSpan('ingest.fetch', { startTime: t0 + 25 }, parent).end(t0 + 40);
    tracing.tracer.startSpan('ingest.decode', { startTime: t0 + 40 }, parent).end(t0 + 42);
    tracing.tracer.startSpan('ingest.apply', { startTime: t0 + 43 }, parent).end(t0 + 50);
    batch.end(t0 + 60);
    await tracing.provider?.forceFlush();
    const stages = changeStages(exporter.getFinishedSpans(), 'a');
    expect(
      stages.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Math.round(v)]))),
    ).toEqual([
      {
        commitToKafka: 25,
        kafkaToFetched: 15,
        fetchedToDecoded: 2,
        decodedToApplied: 8,
        commitToApplied: 50,
      },
      {
        commitToKafka: 15,
        kafkaToFetched: 15,
        fetchedToDecoded: 2,
        decodedToApplied: 8,
        commitToApplied: 40,
      },
    ]);
    expect(changeStages(exporter.getFinishedSpans(), 'c')).toEqual([]);
    await tracing.shutdown();
  });
});
