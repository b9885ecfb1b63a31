// @pda/dev-world/jaeger: a real OTLP receiver for the tracing test (test/) and the tracing benchmark
// (bench/), here because both depend on the dev world and neither on the other. Jaeger (v2, the
// OpenTelemetry Collector with Jaeger's storage and query), built once by scripts/lib/jaeger.sh, run
// on free loopback ports with in-memory storage; its query API (/api/traces) reads the spans back.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@pda/projections/testing';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

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
  /** Process id of the receiver (the benchmark reads its CPU time). */
  readonly pid: number;
  /**
   * Traces of a service in the last hour, with `tags` on one of their spans when given; at most
   * `limit` (default 1,000) of them.
   */
  traces(service: string, tags?: Record<string, string>, limit?: number): Promise<JaegerTrace[]>;
  /**
   * Spans written to its storage since it started, every service together (the collector's own
   * counter): what a benchmark counts when reading each trace back would cost more than the run.
   */
  storedSpans(): Promise<number>;
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
  const [otlp, query, queryGrpc, metrics] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'pda-jaeger-'));
  const config = join(dir, 'jaeger.yaml');
  // Only what the tests and the benchmark need: OTLP/HTTP in, memory storage, the query API, the
  // collector's own counters (Prometheus text) for storedSpans().
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: { receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter] }
  telemetry:
    metrics: { level: basic, readers: [{ pull: { exporter: { prometheus: { host: 127.0.0.1, port: ${metrics} } } } }] }
    logs: { level: warn }
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
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${queryUrl}/api/services`).catch(() => undefined))?.ok !== true) {
    if (child.exitCode !== null) throw new Error(`jaeger exited ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`jaeger query API not answering within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    otlpEndpoint: `http://127.0.0.1:${otlp}`,
    pid: child.pid ?? 0,
    async traces(service, tags, limit = 1000) {
      const params = new URLSearchParams({ service, limit: String(limit), lookback: '1h' });
      if (tags) params.set('tags', JSON.stringify(tags));
      const response = await fetch(`${queryUrl}/api/traces?${params}`);
      const body = (await response.json()) as { data: JaegerTrace[] | null };
      return body.data ?? [];
    },
    async storedSpans() {
      const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      const line = text
        .split('\n')
        .find(
          (l) => l.startsWith('otelcol_exporter_sent_spans_total{') && l.includes('jaeger_storage_exporter'),
        );
      // No line yet: nothing was exported since the start (the counter appears with its first span).
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
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
