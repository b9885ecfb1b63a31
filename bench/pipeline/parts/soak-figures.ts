/**
 * The figures a soak (pipeline/soak.ts) samples, and how each is judged: its growth per hour is
 * the least-squares slope over the samples after the warm-up, and its verdict says whether that
 * growth is within the figure's tolerance (flat), went somewhere and stopped (bounded), or goes
 * on (GROWS). The rule is printed with the results (VERDICT_RULE).
 */

/** One reading every `--sample-seconds`: seconds since the load started, the api process it read. */
export interface SoakSample {
  readonly t: number;
  readonly at: string;
  /** 1 for the first api process, 2 after its restart; 0 while no api runs. */
  readonly apiGeneration: number;
  readonly values: Readonly<Partial<Record<FigureKey, number | null>>>;
}

export type FigureGroup =
  | 'memory'
  | 'descriptors and files'
  | 'WAL and SHM'
  | 'held, streams, statements'
  | 'lag and freshness';

export interface Figure {
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  readonly group: FigureGroup;
  /** A figure of the api process: fitted per api process (its restart starts it afresh). */
  readonly perApiProcess: boolean;
  /** Change over the fitted span still called flat: the larger of this and `relativeTolerance` of its level. */
  readonly tolerance: number;
}

const RELATIVE_TOLERANCE = 0.05;

export const FIGURES = [
  {
    key: 'ingest_rss_mb',
    label: 'ingest RSS',
    unit: 'MB',
    group: 'memory',
    perApiProcess: false,
    tolerance: 16,
  },
  {
    key: 'ingest_heap_mb',
    label: 'ingest heap used',
    unit: 'MB',
    group: 'memory',
    perApiProcess: false,
    tolerance: 16,
  },
  { key: 'api_rss_mb', label: 'api RSS', unit: 'MB', group: 'memory', perApiProcess: true, tolerance: 16 },
  {
    key: 'api_heap_mb',
    label: 'api heap used',
    unit: 'MB',
    group: 'memory',
    perApiProcess: true,
    tolerance: 16,
  },
  {
    key: 'ingest_fds',
    label: 'ingest descriptors',
    unit: '',
    group: 'descriptors and files',
    perApiProcess: false,
    tolerance: 8,
  },
  {
    key: 'api_fds',
    label: 'api descriptors',
    unit: '',
    group: 'descriptors and files',
    perApiProcess: true,
    tolerance: 8,
  },
  {
    key: 'ingest_open_files',
    label: 'ingest company files open',
    unit: '',
    group: 'descriptors and files',
    perApiProcess: false,
    tolerance: 2,
  },
  {
    key: 'api_open_files',
    label: 'api company files open',
    unit: '',
    group: 'descriptors and files',
    perApiProcess: true,
    tolerance: 2,
  },
  {
    key: 'wal_mb',
    label: 'WAL (sum of *-wal)',
    unit: 'MB',
    group: 'WAL and SHM',
    perApiProcess: false,
    tolerance: 4,
  },
  {
    key: 'shm_mb',
    label: 'SHM (sum of *-shm)',
    unit: 'MB',
    group: 'WAL and SHM',
    perApiProcess: false,
    tolerance: 0.5,
  },
  {
    key: 'held_requests',
    label: 'api held requests',
    unit: '',
    group: 'held, streams, statements',
    perApiProcess: true,
    tolerance: 2,
  },
  {
    key: 'open_streams',
    label: 'api open streams',
    unit: '',
    group: 'held, streams, statements',
    perApiProcess: true,
    tolerance: 1,
  },
  {
    key: 'ingest_statements',
    label: 'ingest statements cached',
    unit: '',
    group: 'held, streams, statements',
    perApiProcess: false,
    tolerance: 8,
  },
  {
    key: 'api_statements',
    label: 'api statements cached',
    unit: '',
    group: 'held, streams, statements',
    perApiProcess: true,
    tolerance: 8,
  },
  {
    key: 'lag_events',
    label: 'Kafka lag',
    unit: 'events',
    group: 'lag and freshness',
    perApiProcess: false,
    tolerance: 200,
  },
  {
    key: 'marker_ms',
    label: 'commit → visible (marker)',
    unit: 'ms',
    group: 'lag and freshness',
    perApiProcess: false,
    tolerance: 250,
  },
  {
    key: 'ingest_freshness_s',
    label: 'pda_ingest_freshness_seconds',
    unit: 's',
    group: 'lag and freshness',
    perApiProcess: false,
    tolerance: 1,
  },
] as const satisfies readonly Figure[];

export type FigureKey = (typeof FIGURES)[number]['key'];

export type Verdict = 'flat' | 'bounded' | 'GROWS' | 'n/a';

export const VERDICT_RULE =
  'Fitted: the samples after the warm-up (for an api figure, also 30 s after its process started), ' +
  'one least-squares slope with an intercept per api process. tolerance = the larger of the ' +
  `figure's own and ${RELATIVE_TOLERANCE * 100} % of its median. flat: slope × fitted span within ± tolerance. ` +
  'bounded: beyond it, but falling, or its later half (slope × half span) within tolerance / 2 (it rose, then levelled off). ' +
  'GROWS: rising beyond tolerance over the whole span and still over its later half. n/a: fewer than 3 samples.';

/** Seconds an api process runs before its samples count (it opens its files, fills its caches). */
export const API_SETTLE_SECONDS = 30;

export interface Point {
  readonly t: number;
  readonly value: number;
  /** Points of one segment share an intercept (one api process). */
  readonly segment: number;
}

/**
 * Least squares of value on t with an intercept per segment (the within estimator): units per
 * second, or null when no segment has two distinct times.
 */
export function slopePerSecond(points: readonly Point[]): number | null {
  const bySegment = new Map<number, Point[]>();
  for (const p of points) bySegment.set(p.segment, [...(bySegment.get(p.segment) ?? []), p]);
  let sxy = 0;
  let sxx = 0;
  for (const segment of bySegment.values()) {
    const mt = segment.reduce((s, p) => s + p.t, 0) / segment.length;
    const mv = segment.reduce((s, p) => s + p.value, 0) / segment.length;
    for (const p of segment) {
      sxy += (p.t - mt) * (p.value - mv);
      sxx += (p.t - mt) ** 2;
    }
  }
  return sxx > 0 ? sxy / sxx : null;
}

export interface FigureSummary {
  readonly key: FigureKey;
  readonly first: number | null;
  readonly last: number | null;
  readonly max: number | null;
  readonly growthPerHour: number | null;
  readonly tolerance: number;
  readonly fittedSamples: number;
  readonly verdict: Verdict;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** The points of `figure` the verdict fits: after the warm-up, an api figure once its process settled. */
export function fittedPoints(samples: readonly SoakSample[], figure: Figure, warmupSeconds: number): Point[] {
  const startOf = new Map<number, number>();
  for (const s of samples) if (!startOf.has(s.apiGeneration)) startOf.set(s.apiGeneration, s.t);
  const points: Point[] = [];
  for (const s of samples) {
    const value = s.values[figure.key as FigureKey];
    if (value === null || value === undefined || !Number.isFinite(value) || s.t < warmupSeconds) continue;
    if (figure.perApiProcess) {
      // The first process's start is the run's (its warm-up covers it); a later one settles first.
      const started = s.apiGeneration > 1 ? (startOf.get(s.apiGeneration) ?? 0) : Number.NEGATIVE_INFINITY;
      if (s.apiGeneration === 0 || s.t < started + API_SETTLE_SECONDS) continue;
    }
    points.push({ t: s.t, value, segment: figure.perApiProcess ? s.apiGeneration : 0 });
  }
  return points;
}

export function verdictOf(points: readonly Point[], tolerance: number): Verdict {
  if (points.length < 3) return 'n/a';
  const slope = slopePerSecond(points);
  if (slope === null) return 'n/a';
  const from = Math.min(...points.map((p) => p.t));
  const to = Math.max(...points.map((p) => p.t));
  const growth = slope * (to - from);
  if (Math.abs(growth) <= tolerance) return 'flat';
  if (growth < 0) return 'bounded';
  const middle = (from + to) / 2;
  const later = points.filter((p) => p.t >= middle);
  const laterSlope = later.length >= 3 ? slopePerSecond(later) : null;
  if (laterSlope !== null && laterSlope * (to - middle) <= tolerance / 2) return 'bounded';
  return 'GROWS';
}

export function summarize(samples: readonly SoakSample[], warmupSeconds: number): FigureSummary[] {
  return FIGURES.map((figure) => {
    const all = samples
      .map((s) => s.values[figure.key])
      .filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v));
    const points = fittedPoints(samples, figure, warmupSeconds);
    const tolerance = Math.max(
      figure.tolerance,
      RELATIVE_TOLERANCE * median(points.map((p) => Math.abs(p.value))),
    );
    const slope = points.length >= 2 ? slopePerSecond(points) : null;
    return {
      key: figure.key,
      first: all[0] ?? null,
      last: all.at(-1) ?? null,
      max: all.length > 0 ? Math.max(...all) : null,
      growthPerHour: slope === null ? null : slope * 3600,
      tolerance,
      fittedSamples: points.length,
      verdict: verdictOf(points, tolerance),
    };
  });
}
