import { DiagConsoleLogger, DiagLogLevel, diag, type Tracer, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { SafeSpanExporter } from './safe-exporter.ts';
import { samplerFromSettings } from './sampler.ts';
import { type TracingSettings, tracingSettings } from './settings.ts';

/**
 * A deployable's traces: `tracer` makes spans (a no-op tracer when traces are off, so callers never
 * branch on it), `enabled` says whether any leave the process, `shutdown` sends what is queued.
 */
export interface Tracing {
  readonly tracer: Tracer;
  readonly enabled: boolean;
  readonly settings: TracingSettings;
  /** The provider, for instrumentations that take one (@fastify/otel); undefined when off. */
  readonly provider: TracerProvider | undefined;
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** service.name unless OTEL_SERVICE_NAME says otherwise: `pda-api`, `pda-ingest`. */
  readonly serviceName: string;
  readonly serviceVersion?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Instead of OTLP over HTTP (tests: an in-memory exporter); still wrapped by SafeSpanExporter. */
  readonly exporter?: SpanExporter;
}

export const TRACER_NAME = '@pda/tracing';

/** Traces off: spans are made by the API's no-op tracer and cost next to nothing. */
export function tracingOff(reason = 'off'): Tracing {
  return {
    tracer: trace.getTracer(TRACER_NAME),
    enabled: false,
    settings: { enabled: false, reason },
    provider: undefined,
    shutdown: async () => {},
  };
}

/**
 * Starts the tracer provider when the settings ask for it (settings.ts), with its own provider
 * rather than the global one: a test process runs several apps, each with its own. Not registered
 * as the global provider nor with a propagator, on purpose (sampler.ts says why).
 */
export function startTracing(options: StartTracingOptions): Tracing {
  const env = options.env ?? process.env;
  const settings = options.exporter
    ? ({ enabled: true, serviceName: options.serviceName, endpoint: 'in-process' } as const)
    : tracingSettings(env, options.serviceName);
  if (!settings.enabled) return tracingOff(settings.reason);
  // OTEL_LOG_LEVEL: the SDK's own messages (an exporter that cannot reach its collector) on stderr.
  const logLevel = (env.OTEL_LOG_LEVEL ?? process.env.OTEL_LOG_LEVEL)?.toUpperCase();
  if (logLevel && logLevel in DiagLogLevel)
    diag.setLogger(new DiagConsoleLogger(), DiagLogLevel[logLevel as keyof typeof DiagLogLevel]);
  const scheduleDelay = Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 1000);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      ...(options.serviceVersion && { [ATTR_SERVICE_VERSION]: options.serviceVersion }),
    }),
    sampler: samplerFromSettings(env),
    spanProcessors: [
      new BatchSpanProcessor({
        // The endpoint as settings.ts read it (from `env`); headers, timeout and compression the
        // exporter reads from the process's OTEL_EXPORTER_OTLP_* itself.
        exporter: new SafeSpanExporter(options.exporter ?? new OTLPTraceExporter({ url: settings.endpoint })),
        // Spans leave in batches at most this often (OTEL_BSP_SCHEDULE_DELAY, ms): 1 s so a trace
        // is in the collector soon after the change it follows.
        scheduledDelayMillis: Number.isFinite(scheduleDelay) && scheduleDelay >= 0 ? scheduleDelay : 1000,
      }),
    ],
  });
  return {
    tracer: provider.getTracer(TRACER_NAME),
    enabled: true,
    settings,
    provider,
    shutdown: () => provider.shutdown(),
  };
}
