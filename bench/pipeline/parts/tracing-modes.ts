/**
 * The three ways the tracing cost benchmark (pipeline/tracing-cost.ts) runs each deployable: traces
 * off (no OTLP endpoint: the shipped default), on with 1 % of traces kept (`traceidratio` 0.01, a
 * rate a busy production would choose) and on with every trace kept (`always_on`), as the standard
 * OTEL_* variables an operator sets.
 */

export interface TracingMode {
  /** As the report prints it. */
  readonly name: 'off' | '1 %' | '100 %';
  /** Short, for service names: each mode and round sends under its own. */
  readonly slug: 'off' | 'ratio1' | 'always';
  /** Share of traces kept: what the spans received are checked against. */
  readonly ratio: number;
  readonly sampler?: { readonly OTEL_TRACES_SAMPLER: string; readonly OTEL_TRACES_SAMPLER_ARG?: string };
}

export const TRACING_MODES: readonly TracingMode[] = [
  { name: 'off', slug: 'off', ratio: 0 },
  {
    name: '1 %',
    slug: 'ratio1',
    ratio: 0.01,
    sampler: { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' },
  },
  { name: '100 %', slug: 'always', ratio: 1, sampler: { OTEL_TRACES_SAMPLER: 'always_on' } },
];

/**
 * The OTEL_* variables of `mode` sending to `otlpEndpoint` as `serviceName`. Off sets no endpoint
 * at all (what a deployment without a collector has), and says so with OTEL_TRACES_EXPORTER=none in
 * case the caller's own environment names one.
 */
export function tracingEnv(
  mode: TracingMode,
  otlpEndpoint: string,
  serviceName: string,
): Record<string, string> {
  if (!mode.sampler) return { OTEL_TRACES_EXPORTER: 'none' };
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
    OTEL_SERVICE_NAME: serviceName,
    ...mode.sampler,
  };
}

/**
 * The modes of each round: the order reversed every other round, so a drift of the machine over
 * the run (another job starting, the page cache warming) does not fall on one mode only.
 */
export function roundOrder(rounds: number): TracingMode[][] {
  return Array.from({ length: rounds }, (_, round) =>
    round % 2 === 0 ? [...TRACING_MODES] : [...TRACING_MODES].reverse(),
  );
}
