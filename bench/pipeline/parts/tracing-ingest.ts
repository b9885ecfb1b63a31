/**
 * One ingest run of the tracing cost benchmark (pipeline/tracing-cost.ts): the real worker
 * (shared/ingest-worker.ts) from a new consumer group over topics filled once, into a fresh data
 * directory, with the tracer of one mode (tracing-modes.ts) sending to the benchmark's Jaeger.
 * Steady events/s from the first applied chunk on, as ingest/throughput.ts measures it; CPU per
 * event of this process (both of the worker's threads and the span exporter; the benchmark's own
 * polling is a few ms) and of the receiver apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Jaeger } from '@pda/dev-world/jaeger';
import type { AvscTypes } from '@pda/ingest';
import { startTracing } from '@pda/tracing';
import { benchWorker } from '../../shared/ingest-worker.ts';
import { processCpuSeconds } from '../../shared/process-cpu.ts';
import { traceSample } from './trace-sample.ts';
import { type TracingMode, tracingEnv } from './tracing-modes.ts';

export interface IngestRun {
  readonly mode: TracingMode['name'];
  readonly round: number;
  readonly events: number;
  readonly steadyEventsPerSecond: number | null;
  readonly seconds: number;
  readonly cpuUsPerEvent: number;
  readonly receiverCpuSeconds: number;
  readonly applyCalls: number;
  /** Spans the receiver stored while this run sent (after its provider flushed). */
  readonly spansReceived: number;
  /** Span names of one trace read back from the receiver, when any was kept. */
  readonly sampleTrace: readonly string[];
}

export interface IngestRunInputs {
  readonly prefix: string;
  readonly events: number;
  readonly avscTypes: AvscTypes;
  readonly receiver: Jaeger;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function runIngest(
  inputs: IngestRunInputs,
  mode: TracingMode,
  round: number,
): Promise<IngestRun> {
  const { prefix, events, avscTypes, receiver } = inputs;
  const serviceName = `pda-ingest-bench-${mode.slug}-${round}`;
  const tracing = startTracing({
    serviceName,
    env: tracingEnv(mode, receiver.otlpEndpoint, serviceName),
  });
  if (tracing.enabled !== (mode.sampler !== undefined))
    throw new Error(`tracing ${mode.name}: startTracing says enabled=${tracing.enabled}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-tracing-ingest-'));
  const { worker, metrics } = benchWorker({
    groupId: `${prefix}-ingest-${mode.slug}-${round}`,
    topicPrefix: prefix,
    dataDir,
    avscTypes,
    ...(tracing.enabled && { tracer: tracing.tracer }),
  });
  const spansBefore = await receiver.storedSpans();
  const receiverCpuBefore = processCpuSeconds(receiver.pid);
  const cpu = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  };
  const handled = async () => (await metrics.events.get()).values.reduce((sum, v) => sum + v.value, 0);
  const start = performance.now();
  const running = worker.run();
  let done = await handled();
  let first: { at: number; handled: number; cpu: number } | undefined;
  while (done < events) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    done = await handled();
    if (!first && done > 0) first = { at: performance.now(), handled: done, cpu: cpu() };
  }
  const end = performance.now();
  const cpuEnd = cpu();
  const applyCalls =
    (await metrics.batchDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  worker.stop();
  await running;
  // What the batch processor still holds leaves now; the receiver's own batch waits 100 ms.
  await tracing.shutdown();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const spansReceived = (await receiver.storedSpans()) - spansBefore;
  const sampleTrace = spansReceived > 0 ? await traceSample(receiver, serviceName) : [];
  rmSync(dataDir, { recursive: true, force: true });
  const steadyEvents = first ? done - first.handled : 0;
  return {
    mode: mode.name,
    round,
    events: done,
    steadyEventsPerSecond: first ? Math.round(steadyEvents / ((end - first.at) / 1000)) : null,
    seconds: round2((end - start) / 1000),
    cpuUsPerEvent: first && steadyEvents > 0 ? round2(((cpuEnd - first.cpu) * 1e6) / steadyEvents) : 0,
    receiverCpuSeconds: round2(processCpuSeconds(receiver.pid) - receiverCpuBefore),
    applyCalls,
    spansReceived,
    sampleTrace,
  };
}
