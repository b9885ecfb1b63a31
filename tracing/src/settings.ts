/**
 * Whether traces are on, from the standard OpenTelemetry settings (the names every collector's
 * documentation uses, https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 * Off by default: a deployable exports spans only when an OTLP endpoint is named
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp;
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn them off whatever else is set. The
 * exporter (OTLP over HTTP, protobuf-free JSON) and the sampler (OTEL_TRACES_SAMPLER,
 * OTEL_TRACES_SAMPLER_ARG) read their own settings; docs/operations.md, "Traces", lists them.
 */

export type TracingSettings =
  | { readonly enabled: false; readonly reason: string }
  | { readonly enabled: true; readonly serviceName: string; readonly endpoint: string };

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_ENDPOINT = 'http://localhost:4318';

export function tracingSettings(env: Env, defaultServiceName: string): TracingSettings {
  const set = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  if (set('OTEL_SDK_DISABLED')?.toLowerCase() === 'true')
    return { enabled: false, reason: 'OTEL_SDK_DISABLED=true' };
  const exporters = (set('OTEL_TRACES_EXPORTER') ?? '').split(',').map((e) => e.trim().toLowerCase());
  if (exporters.includes('none')) return { enabled: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  const unknown = exporters.filter((e) => e !== '' && e !== 'otlp');
  if (unknown.length > 0)
    throw new Error(
      `OTEL_TRACES_EXPORTER=${set('OTEL_TRACES_EXPORTER')}: only "otlp" (OTLP over HTTP) and "none" are supported`,
    );
  const tracesEndpoint = set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = set('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined && !exporters.includes('otlp'))
    return { enabled: false, reason: 'no OTLP endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT)' };
  const protocol = set('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? set('OTEL_EXPORTER_OTLP_PROTOCOL');
  if (protocol !== undefined && protocol !== 'http/json')
    throw new Error(
      `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: only "http/json" (OTLP over HTTP) is supported`,
    );
  return {
    enabled: true,
    serviceName: set('OTEL_SERVICE_NAME') ?? defaultServiceName,
    // What the exporter will use, for the start-up log line (it reads the settings itself).
    endpoint: tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/$/, '')}/v1/traces`,
  };
}
