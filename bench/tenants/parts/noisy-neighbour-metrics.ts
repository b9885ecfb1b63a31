/**
 * What bench/tenants/noisy-neighbour.ts reads from the api's admin /metrics (api/README.md, "Metrics"):
 * the event-loop delay and the refusals by reason.
 *
 * The delay is prom-client's default collector (api/src/observability/metrics.ts: collectDefaultMetrics):
 * a perf_hooks monitorEventLoopDelay histogram at 10 ms resolution, whose p50/p99/max are set and
 * then reset on every scrape. So a scrape at a phase's start and one at its end give that phase's
 * figures. Each sample is the time between two turns of a 10 ms timer: an idle loop reads ~10 ms,
 * and a loop held X ms by synchronous work reads ~10 + X.
 */

export interface MetricsSample {
  readonly lagP50Ms: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  readonly lagMeanMs: number;
  /** pda_api_rate_limited_total by reason (cumulative). */
  readonly refusals: Record<string, number>;
  readonly heldRequests: number;
}

const PREFIX = 'pda_api_';

export async function scrapeMetrics(adminBase: string): Promise<MetricsSample> {
  const response = await fetch(`${adminBase}/metrics`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${text.slice(0, 200)}`);
  const value = (name: string) => {
    const match = new RegExp(`^${PREFIX}${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
    if (!match) throw new Error(`/metrics has no ${PREFIX}${name}`);
    return Number(match[1]);
  };
  const ms = (name: string) => Math.round(value(name) * 1e5) / 100;
  const refusals: Record<string, number> = {};
  for (const match of text.matchAll(/^pda_api_rate_limited_total\{reason="([^"]+)"\} (\S+)$/gm)) {
    refusals[match[1]!] = Number(match[2]);
  }
  return {
    lagP50Ms: ms('nodejs_eventloop_lag_p50_seconds'),
    lagP99Ms: ms('nodejs_eventloop_lag_p99_seconds'),
    lagMaxMs: ms('nodejs_eventloop_lag_max_seconds'),
    lagMeanMs: ms('nodejs_eventloop_lag_mean_seconds'),
    refusals,
    heldRequests: value('held_requests'),
  };
}

/** Refusals counted between two samples, by reason (reasons without any left out). */
export function refusalsBetween(before: MetricsSample, after: MetricsSample): Record<string, number> {
  const spent: Record<string, number> = {};
  for (const [reason, total] of Object.entries(after.refusals)) {
    const delta = total - (before.refusals[reason] ?? 0);
    if (delta > 0) spent[reason] = delta;
  }
  return spent;
}
