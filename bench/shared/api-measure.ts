/**
 * One measurement of the api benchmark: autocannon against one URL for a fixed duration after a
 * warm-up, reporting throughput, latency percentiles and every non-2xx answer or error (a
 * measurement that saw any is marked invalid in the report rather than silently averaged in).
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Requests per second over all connections; undefined = as fast as the server answers. */
  readonly rate?: number | undefined;
  /** Changes each request before it is sent (e.g. a header drawn per request: tenants/fanout.ts). */
  readonly setupRequest?: ((request: autocannon.Request) => autocannon.Request) | undefined;
}

export interface Measurement {
  readonly name: string;
  readonly url: string;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly bytesPerResponse: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
}

function run(url: string, headers: Record<string, string>, options: LoadOptions, duration: number) {
  const { connections, rate, setupRequest } = options;
  return autocannon({
    url,
    headers,
    connections,
    duration,
    pipelining: 1,
    // OFFSET deep into a million rows takes seconds per request: count those answers, do not drop them.
    timeout: 60,
    ...(rate ? { overallRate: rate } : {}),
    ...(setupRequest ? { requests: [{ setupRequest }] } : {}),
  });
}

export async function measure(
  name: string,
  url: string,
  headers: Record<string, string>,
  options: LoadOptions,
): Promise<Measurement> {
  if (options.warmupSeconds > 0) await run(url, headers, options, options.warmupSeconds);
  const result = await run(url, headers, options, options.durationSeconds);
  const requests = result.requests.total;
  return {
    name,
    url,
    requestsPerSecond: Math.round(requests / options.durationSeconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    bytesPerResponse: requests > 0 ? Math.round(result.throughput.total / requests) : 0,
    requests,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
