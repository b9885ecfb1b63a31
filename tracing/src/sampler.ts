import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';

/**
 * The sampler the standard settings name: OTEL_TRACES_SAMPLER (`always_on`, `always_off`,
 * `traceidratio`, and the `parentbased_` form of each; default `parentbased_always_on`) with
 * OTEL_TRACES_SAMPLER_ARG, the ratio for the `traceidratio` ones (0..1, default 1). A span's parent
 * is always one of ours: the api ignores a caller's `traceparent` (a partner must not be able to
 * switch sampling on for its own requests), so the parent-based forms only keep a batch's spans
 * whole. A wrong value is refused at start with what is accepted.
 */
export function samplerFromSettings(env: Readonly<Record<string, string | undefined>>): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on').toLowerCase();
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = ratioText === undefined || ratioText === '' ? 1 : Number(ratioText);
  const needsRatio = name.endsWith('traceidratio');
  if (needsRatio && !(Number.isFinite(ratio) && ratio >= 0 && ratio <= 1))
    throw new Error(`OTEL_TRACES_SAMPLER_ARG=${ratioText}: a ratio from 0 to 1 (0.01 samples 1 % of traces)`);
  const root: Record<string, () => Sampler> = {
    always_on: () => new AlwaysOnSampler(),
    always_off: () => new AlwaysOffSampler(),
    traceidratio: () => new TraceIdRatioBasedSampler(ratio),
  };
  const parentBased = name.startsWith('parentbased_');
  const make = root[parentBased ? name.slice('parentbased_'.length) : name];
  if (make === undefined)
    throw new Error(
      `OTEL_TRACES_SAMPLER=${env.OTEL_TRACES_SAMPLER}: one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`,
    );
  return parentBased ? new ParentBasedSampler({ root: make() }) : make();
}
