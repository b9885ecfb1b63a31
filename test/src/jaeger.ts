// A real OTLP receiver for the tracing tests and benchmarks: Jaeger (v2, the OpenTelemetry Collector
// with Jaeger's storage and query), built once by scripts/lib/jaeger.sh, run here on free loopback
// ports with in-memory storage; its query API (/api/traces) reads the spans back.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import { repoRoot, waitFor } from './stack-env.ts';

export interface JaegerSpan {
  readonly traceID: string;
  readonly spanID: string;
  readonly operationName: string;
  readonly references: readonly { refType: string; traceID: string; spanID: string }[];
  readonly startTime: number;
  readonly duration: number;
  readonly tags: readonly { key: string; type: string; value: unknown }[];
}

export interface JaegerTrace {
  readonly traceID: string;
  readonly spans: readonly JaegerSpan[];
}

export interface Jaeger {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT (OTLP over HTTP). */
  readonly otlpEndpoint: string;
  /** Traces of a service in the last hour, with `tags` on one of their spans when given. */
  traces(service: string, tags?: Record<string, string>): Promise<JaegerTrace[]>;
  stop(): Promise<void>;
}

/** The built Jaeger: $PDA_JAEGER_BIN (scripts/test.sh sets it), else built now (minutes, once). */
export function jaegerBinary(): string {
  const given = process.env.PDA_JAEGER_BIN;
  if (given) return given;
  return execFileSync('bash', ['-c', 'source scripts/lib/jaeger.sh && ensure_jaeger'], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export async function startJaeger(): Promise<Jaeger> {
  const [otlp, query, queryGrpc] = [await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'pda-jaeger-'));
  const config = join(dir, 'jaeger.yaml');
  // Only what the tests need: OTLP/HTTP in, memory storage, the query API; no metrics port.
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: { receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter] }
  telemetry: { metrics: { level: none }, logs: { level: warn } }
extensions:
  jaeger_query:
    storage: { traces: memstore }
    http: { endpoint: 127.0.0.1:${query} }
    grpc: { endpoint: 127.0.0.1:${queryGrpc} }
  jaeger_storage:
    backends: { memstore: { memory: { max_traces: 200000 } } }
receivers:
  otlp: { protocols: { http: { endpoint: 127.0.0.1:${otlp} } } }
processors:
  batch: { timeout: 100ms }
exporters:
  jaeger_storage_exporter: { trace_storage: memstore }
`,
  );
  const child: ChildProcess = spawn(jaegerBinary(), ['--config', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const queryUrl = `http://127.0.0.1:${query}`;
  await waitFor(
    'jaeger query API',
    async () => {
      if (child.exitCode !== null) throw new Error(`jaeger exited ${child.exitCode}:\n${output}`);
      return (await fetch(`${queryUrl}/api/services`).catch(() => undefined))?.ok === true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    async traces(service, tags) {
      const params = new URLSearchParams({ service, limit: '1000', lookback: '1h' });
      if (tags) params.set('tags', JSON.stringify(tags));
      const response = await fetch(`${queryUrl}/api/traces?${params}`);
      const body = (await response.json()) as { data: JaegerTrace[] | null };
      return body.data ?? [];
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A span's tag value by key (Jaeger gives arrays as JSON text). */
export function tagOf(span: JaegerSpan, key: string): unknown {
  return span.tags.find((tag) => tag.key === key)?.value;
}
