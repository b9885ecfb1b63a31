import { readIngestState } from '@pda/projections';
import type { ProjectionFiles } from './projection-files.ts';

/**
 * The projections check of /v1/health: `down` when control.sqlite cannot be read or is a version
 * this build does not understand; `degraded` when ingest's last committed batch is older than the
 * configured bound (unset: staleness is reported, not judged, since an idle source is normal).
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
  let lastBatchAtMs: number | null;
  try {
    lastBatchAtMs = readIngestState(files.control()).lastBatchAtMs;
  } catch (error) {
    return { status: 'down', stalenessSeconds: null, error };
  }
  const stalenessSeconds = lastBatchAtMs === null ? null : Math.max(0, (nowMs - lastBatchAtMs) / 1000);
  const stale =
    maxStalenessSeconds !== undefined &&
    (stalenessSeconds === null || stalenessSeconds > maxStalenessSeconds);
  return { status: stale ? 'degraded' : 'ok', stalenessSeconds };
}
