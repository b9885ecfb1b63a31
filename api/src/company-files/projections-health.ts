import { readIngestState, sourceCurrentAt } from '@pda/projections/read';
import type { ProjectionFiles } from './projection-files.ts';

/**
 * The projections check of /v1/health: `down` when control.sqlite cannot be read or is a version
 * this build does not understand; `degraded` when the projections lag behind their source by more
 * than the configured bound (unset: reported, not judged).
 *
 * Staleness = now − the source time up to which every change is known applied: the later of the
 * last applied change's commit time and the last Debezium heartbeat ingest confirmed while caught
 * up. Heartbeats keep it small while the source is idle; it grows when the source, Debezium or
 * ingest stalls (ingest/README.md, "Freshness and heartbeats").
 */

export type CheckStatus = 'ok' | 'degraded' | 'down';

export interface ProjectionsHealth {
  readonly status: CheckStatus;
  readonly stalenessSeconds: number | null;
  readonly error?: unknown;
}

export function projectionsHealth(
  files: ProjectionFiles,
  nowMs: number,
  maxStalenessSeconds: number | undefined,
): ProjectionsHealth {
  let currentAtMs: number | null;
  try {
    currentAtMs = sourceCurrentAt(readIngestState(files.control()));
  } catch (error) {
    return { status: 'down', stalenessSeconds: null, error };
  }
  const stalenessSeconds = currentAtMs === null ? null : Math.max(0, (nowMs - currentAtMs) / 1000);
  const stale =
    maxStalenessSeconds !== undefined &&
    (stalenessSeconds === null || stalenessSeconds > maxStalenessSeconds);
  return { status: stale ? 'degraded' : 'ok', stalenessSeconds };
}
