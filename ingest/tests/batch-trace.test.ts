import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { listCompanyFiles } from '@pda/projections/model';
import { openCompanyReader, ReadHandle, readApplyTraces } from '@pda/projections/read';
import { ProjectionStore } from '@pda/projections/write';
import { startTracing } from '@pda/tracing';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { createDecoder } from '../src/decode/index.ts';
import { MAX_LISTED } from '../src/observability/batch-trace.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { tempDataDir } from './support/apply.ts';
import { fixtureRecords } from './support/fixtures.ts';

// The spans of an apply call (observability/batch-trace.ts): one root per batch with a child per
// stage, the changes' positions as attributes, and its ids left in each company file it wrote.

let store: ProjectionStore | undefined;
afterEach(() => store?.close());

function tracedPipeline(sampler = 'always_on') {
  const exporter = new InMemorySpanExporter();
  const tracing = startTracing({
    serviceName: 'pda-ingest',
    exporter,
    env: { OTEL_TRACES_SAMPLER: sampler },
  });
  const dataDir = tempDataDir('ingest-trace-');
  store = ProjectionStore.open({ dataDir });
  const pipeline = createPipeline({
    decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
    sink: inProcessSink(store),
    metrics: createMetrics(),
    logger: pino({ level: 'silent' }),
    tracer: tracing.tracer,
  });
  const spans = async () => {
    await tracing.provider?.forceFlush();
    return exporter.getFinishedSpans();
  };
  return { pipeline, spans, dataDir };
}

describe('batch traces', () => {
  it('one batch span with its stages, the changes listed, and its ids in each company file written', async () => {
    const { pipeline, spans, dataDir } = tracedPipeline();
    const records = fixtureRecords().map((r, i) => ({ ...r, timestampMs: 1_795_000_000_000 + i }));
    const summary = await pipeline.process(records);
    expect(summary.applied).toBeGreaterThan(0);
    const all = await spans();
    const batch = all.find((s) => s.name === 'ingest.batch');
    expect(batch).toBeDefined();
    const children = all.filter((s) => s.parentSpanContext?.spanId === batch?.spanContext().spanId);
    expect(children.map((s) => s.name).sort()).toEqual([
      'ingest.apply',
      'ingest.decode',
      'ingest.fetch',
      'ingest.plan',
    ]);
    for (const child of children) expect(child.spanContext().traceId).toBe(batch?.spanContext().traceId);

    const attributes = batch?.attributes ?? {};
    const listed = Math.min(summary.events, MAX_LISTED);
    expect(attributes['pda.events']).toBe(records.length);
    expect(attributes['pda.changes.listed']).toBeLessThanOrEqual(listed);
    const lsns = attributes['pda.change.lsn'] as number[];
    const kafka = attributes['pda.change.kafka'] as string[];
    const commits = attributes['pda.change.source_commit_ms'] as number[];
    expect(lsns.length).toBe(attributes['pda.changes.listed']);
    expect(lsns.every((lsn) => Number.isSafeInteger(lsn) && lsn > 0)).toBe(true);
    expect(kafka[0]).toMatch(/^pda\.public\.[a-z_]+\/\d+\/\d+$/);
    expect(commits.every((t) => t >= (attributes['pda.source.commit_ms.min'] as number))).toBe(true);
    expect((attributes['pda.change.company'] as string[]).some((c) => /^[0-9a-f-]{36}$/.test(c))).toBe(true);

    // Every company file the batch wrote a row to holds the link (a company with no row yet, none).
    const links = listCompanyFiles(dataDir).flatMap((company) => {
      const reader = new ReadHandle(openCompanyReader(dataDir, company));
      const found = readApplyTraces(reader, 0, Number.MAX_SAFE_INTEGER, 10);
      reader.close();
      return found;
    });
    expect(links.length).toBeGreaterThan(0);
    const id = { traceId: batch?.spanContext().traceId, spanId: batch?.spanContext().spanId };
    expect(links).toEqual(links.map(() => id));
  });

  it('a batch the sampler drops makes no span and writes no link', async () => {
    const { pipeline, spans, dataDir } = tracedPipeline('always_off');
    expect((await pipeline.process(fixtureRecords())).applied).toBeGreaterThan(0);
    expect(await spans()).toEqual([]);
    for (const company of listCompanyFiles(dataDir)) {
      const reader = new ReadHandle(openCompanyReader(dataDir, company));
      expect(readApplyTraces(reader, 0, Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      reader.close();
    }
  });
});
