/**
 * `rebuild`: builds the projections into a NEW generation directory from the earliest offsets
 * under a NEW consumer group until caught up (lag ≤ INGEST_READY_MAX_LAG twice in a row), then
 * swaps the data-directory symlink to it atomically. The api keeps serving the old files until it
 * notices the swap (realpath change) and reopens; the live worker notices too and continues on the
 * new generation with the new group. The old generation is left on disk for rollback/cleanup.
 *
 * Progress: the builder worker logs 'catching up' { eventsPerSecond, lag, etaSeconds } at info
 * every 10 s and 'caught up' with the total time and mean rate (observability/catch-up-reporter.ts).
 */
import type { SourceTable } from '@pda/projections/model';
import type { Logger } from 'pino';
import type { IngestConfig } from '../config.ts';
import type { ColumnType } from '../decode/index.ts';
import { adoptDirectory, createGeneration, type GenerationInfo, layoutOf, swapTo } from '../generations.ts';
import { createWorker } from '../worker.ts';

export class RebuildError extends Error {
  override readonly name = 'RebuildError';
}

export interface RebuildDeps {
  readonly logger: Logger;
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly adoptPlainDirectory?: boolean;
  readonly signal?: AbortSignal;
}

export async function rebuild(
  config: IngestConfig,
  deps: RebuildDeps,
): Promise<GenerationInfo & { dir: string }> {
  const { logger } = deps;
  const layout = layoutOf(config.dataDir);
  if (layout.kind === 'directory') {
    if (!deps.adoptPlainDirectory) {
      throw new RebuildError(
        `${layout.link} is a plain directory; rerun with --adopt-directory to move it to ${layout.generationsDir}/g0 behind a symlink (stop the api for that moment)`,
      );
    }
    logger.info(
      { to: adoptDirectory(layout, config.kafka.groupId) },
      'adopted the plain data directory as g0',
    );
  }
  const { dir, info } = createGeneration(layout, config.kafka.groupId);
  logger.info({ dir, groupId: info.groupId }, 'rebuilding from the earliest offsets');

  const worker = createWorker(
    {
      ...config,
      dataDir: dir,
      kafka: { ...config.kafka, groupId: info.groupId, fromBeginning: true },
      admin: { ...config.admin, port: 0 },
    },
    // A generation built from topics that lost their oldest events would lack rows, silently.
    { logger, avscTypes: deps.avscTypes, followSwaps: false, refuseTruncatedTopics: true },
  );
  const running = worker.run();
  let failed: unknown;
  running.catch((error) => {
    failed = error;
  });
  try {
    let caughtUpPolls = 0;
    while (caughtUpPolls < 2) {
      if (failed) throw failed;
      if (deps.signal?.aborted)
        throw new RebuildError('rebuild interrupted; the live generation is unchanged');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const source = worker.source();
      const lag = source?.lag();
      const caughtUp = source?.connected() && lag?.measured && lag.total <= config.readyMaxLag;
      caughtUpPolls = caughtUp ? caughtUpPolls + 1 : 0;
      logger.debug({ lag: lag?.total, caughtUpPolls }, 'rebuild progress');
    }
  } finally {
    worker.stop();
    await running.catch(() => {});
  }
  if (failed) throw failed;
  swapTo(layout, dir);
  logger.info({ dataDir: layout.link, generation: info.generation }, 'swapped to the rebuilt generation');
  return { ...info, dir };
}
