/**
 * One api run of the tracing cost benchmark (pipeline/tracing-cost.ts): the api as its deployable
 * (api/src/main.ts in its own process, tracing from the OTEL_* variables of one mode,
 * tracing-modes.ts) over the benchmark's list fixture; under autocannon a list page of 50 and the
 * change feed's first page of 50: req/s, p99, the api process's CPU per request (steadier than
 * req/s on a machine the load generator shares), and the spans the receiver stored for the run.
 */
import { join } from 'node:path';
import type { Jaeger } from '@pda/dev-world/jaeger';
import { freePort } from '@pda/projections/testing';
import type { ListFixture } from '../../shared/api-fixture.ts';
import { type LoadOptions, type Measurement, measure } from '../../shared/api-measure.ts';
import { answersHealth, benchApiEnv, startServer } from '../../shared/api-processes.ts';
import { repoRoot } from '../../shared/paths.ts';
import { processCpuSeconds } from '../../shared/process-cpu.ts';
import { traceSample } from './trace-sample.ts';
import { type TracingMode, tracingEnv } from './tracing-modes.ts';

export interface ApiEndpointRun extends Measurement {
  readonly cpuUsPerRequest: number;
}

export interface ApiRun {
  readonly mode: TracingMode['name'];
  readonly round: number;
  readonly list: ApiEndpointRun;
  readonly feed: ApiEndpointRun;
  /** Every answered request of the run, warm-ups included: what the spans came from. */
  readonly requests: number;
  readonly receiverCpuSeconds: number;
  readonly spansReceived: number;
  readonly sampleTrace: readonly string[];
}

export interface ApiRunInputs {
  readonly fixture: ListFixture;
  readonly load: LoadOptions;
  readonly receiver: Jaeger;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function runApi(inputs: ApiRunInputs, mode: TracingMode, round: number): Promise<ApiRun> {
  const { fixture, load, receiver } = inputs;
  const serviceName = `pda-api-bench-${mode.slug}-${round}`;
  const port = await freePort();
  const spansBefore = await receiver.storedSpans();
  const receiverCpuBefore = processCpuSeconds(receiver.pid);
  const server = await startServer(
    `api (traces ${mode.name})`,
    join(repoRoot, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(fixture.dataDir, port, {
      // One key over several connections: its fair shares out of the way, as api/list.ts has them.
      API_MAX_IN_PROGRESS_PER_KEY: '0',
      API_MAX_IN_PROGRESS_PER_COMPANY: '0',
      ...tracingEnv(mode, receiver.otlpEndpoint, serviceName),
    }),
    answersHealth,
  );
  let requests = 0;
  try {
    const headers = { authorization: `Bearer ${fixture.key}` };
    const one = async (name: string, url: string): Promise<ApiEndpointRun> => {
      // The warm-up as a run of its own: its requests are counted (each may leave spans).
      const warm = await measure(`${name} warm-up`, url, headers, {
        ...load,
        durationSeconds: load.warmupSeconds,
        warmupSeconds: 0,
      });
      const cpuBefore = processCpuSeconds(server.pid);
      const measured = await measure(name, url, headers, { ...load, warmupSeconds: 0 });
      const cpu = processCpuSeconds(server.pid) - cpuBefore;
      requests += warm.requests + measured.requests;
      return {
        ...measured,
        cpuUsPerRequest: measured.requests > 0 ? Math.round((cpu * 1e6) / measured.requests) : 0,
      };
    };
    const list = await one('list page 1 of 50', `${server.base}/v1/sites?limit=50`);
    const feed = await one('change feed page 1 of 50', `${server.base}/v1/changes?limit=50`);
    // SIGTERM: the api closes, and its onClose hook sends what the batch processor still holds.
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const spansReceived = (await receiver.storedSpans()) - spansBefore;
    return {
      mode: mode.name,
      round,
      list,
      feed,
      requests,
      receiverCpuSeconds: round2(processCpuSeconds(receiver.pid) - receiverCpuBefore),
      spansReceived,
      sampleTrace: spansReceived > 0 ? await traceSample(receiver, serviceName) : [],
    };
  } finally {
    await server.stop();
  }
}
