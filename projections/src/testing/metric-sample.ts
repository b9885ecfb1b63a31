/**
 * The value of one sample line of a Prometheus text exposition (`name{labels} value`): `series` is
 * the line up to its value, the labels as the exporter writes them; undefined when no line has it.
 */
export function metricSample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
