/**
 * The Prometheus text both deployables serve on their admin port (prom-client), read into
 * numbers for the soak's samples (pipeline/soak.ts). Only what a sample needs: a metric's value
 * summed over its label sets (the lag is one series per partition), optionally over the series
 * whose labels match.
 */

export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Every sample line of an exposition (comments and blank lines skipped; NaN values kept as NaN). */
export function parsePrometheus(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL))
      labels[key as string] = (value as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/**
 * The sum of `name` over its series (those whose labels pass `where`), or null when the
 * exposition has no such series (a gauge that is absent, an older deployable).
 */
export function metricSum(
  samples: readonly MetricSample[],
  name: string,
  where: (labels: Readonly<Record<string, string>>) => boolean = () => true,
): number | null {
  let sum: number | null = null;
  for (const s of samples) if (s.name === name && where(s.labels)) sum = (sum ?? 0) + s.value;
  return sum;
}
