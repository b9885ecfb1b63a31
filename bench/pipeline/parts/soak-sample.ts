/**
 * One sample of a soak (pipeline/soak.ts): each process's memory and descriptors from /proc and
 * its heap, files, statements, held requests and lag from its /metrics, the WAL and SHM files of
 * the data directory, and the marker's commit → visible through the api.
 */
import { diskUse, processStats } from '../../shared/process-stats.ts';
import type { FigureKey } from './soak-figures.ts';
import { metricSum, parsePrometheus } from './soak-metrics.ts';

const MB = 1024 * 1024;
const round = (x: number | null, digits = 1) =>
  x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits;

async function scrape(admin: string) {
  try {
    const response = await fetch(`${admin}/metrics`, { signal: AbortSignal.timeout(5_000) });
    return response.ok ? parsePrometheus(await response.text()) : null;
  } catch {
    return null;
  }
}

function stats(pid: number) {
  try {
    return processStats(pid);
  } catch {
    return null; // exited meanwhile
  }
}

export interface Sampled {
  readonly pid: number;
  readonly admin: string;
}

/** The ingest and api figures of one sample (`api` undefined while it restarts: its figures null). */
export async function readFigures(options: {
  readonly ingest: Sampled;
  readonly api: Sampled | undefined;
  readonly dataDir: string;
}): Promise<Partial<Record<FigureKey, number | null>>> {
  const [ingestMetrics, apiMetrics] = await Promise.all([
    scrape(options.ingest.admin),
    options.api ? scrape(options.api.admin) : Promise.resolve(null),
  ]);
  const ingestProc = stats(options.ingest.pid);
  const apiProc = options.api ? stats(options.api.pid) : null;
  const im = (name: string) => (ingestMetrics ? metricSum(ingestMetrics, name) : null);
  const am = (name: string) => (apiMetrics ? metricSum(apiMetrics, name) : null);
  const disk = diskUse(options.dataDir);
  return {
    ingest_rss_mb: ingestProc?.rssMb ?? null,
    ingest_heap_mb: round((im('pda_ingest_nodejs_heap_size_used_bytes') ?? Number.NaN) / MB),
    api_rss_mb: apiProc?.rssMb ?? null,
    api_heap_mb: apiMetrics ? round((am('pda_api_nodejs_heap_size_used_bytes') ?? Number.NaN) / MB) : null,
    ingest_fds: ingestProc?.openFds ?? null,
    api_fds: apiProc?.openFds ?? null,
    ingest_open_files: im('pda_ingest_open_company_files'),
    api_open_files: am('pda_api_open_company_files'),
    wal_mb: round(disk.walBytes / MB, 2),
    shm_mb: round(disk.shmBytes / MB, 2),
    held_requests: am('pda_api_held_requests'),
    open_streams: am('pda_api_open_streams'),
    ingest_statements: im('pda_ingest_statement_cache_size'),
    api_statements: am('pda_api_statement_cache_size'),
    lag_events: im('pda_ingest_consumer_lag'),
    ingest_freshness_s: round(im('pda_ingest_freshness_seconds'), 2),
  };
}

/** The answered 5xx of the api process so far, by its own count (pda_api_requests_total). */
export async function api5xx(admin: string): Promise<number | null> {
  const metrics = await scrape(admin);
  return metrics ? (metricSum(metrics, 'pda_api_requests_total', (l) => Number(l.status) >= 500) ?? 0) : null;
}

/** Polls `read` every 50 ms until it returns `name`; the ms since `committedAt`, or null after `timeoutMs`. */
export async function visibleAfter(
  name: string,
  committedAt: number,
  read: () => Promise<string | undefined>,
  timeoutMs = 8_000,
): Promise<number | null> {
  while (performance.now() - committedAt < timeoutMs) {
    if ((await read().catch(() => undefined)) === name) return Math.round(performance.now() - committedAt);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}
