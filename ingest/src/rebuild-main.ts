/**
 * `pnpm --filter @pda/ingest run rebuild [--adopt-directory]` (`run`: plain `pnpm rebuild` is pnpm's own command for native dependencies): same INGEST_* environment as `start`.
 * Builds a new projection generation under a new consumer group until caught up, then swaps
 * INGEST_DATA_DIR (a symlink) to it. Prints the generation as one JSON line. Exit 2: bad config or
 * usage; 1: failed (the live generation is unchanged).
 */

import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import { ConfigError, parseConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { RebuildError, rebuild } from './rebuild/rebuild.ts';
import { loadAvscTypes } from './schema-types.ts';

const USAGE = 'usage: rebuild [--adopt-directory]';

await runCli(USAGE, async () => {
  const { values: args } = parseArgs({
    args: cliArgs(),
    strict: true,
    allowPositionals: false,
    options: { 'adopt-directory': { type: 'boolean', default: false } },
  });
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    throw error instanceof ConfigError ? new UsageError(error.message) : error;
  }
  const logger = createLogger(config.INGEST_LOG_LEVEL, 'rebuild');
  const interrupted = new AbortController();
  process.once('SIGINT', () => interrupted.abort());
  process.once('SIGTERM', () => interrupted.abort());
  try {
    const result = await rebuild(config, {
      logger,
      avscTypes: await loadAvscTypes(logger),
      adoptPlainDirectory: args['adopt-directory'],
      signal: interrupted.signal,
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    // A refusal is its own one-line message; anything else is unexpected: log it whole first.
    if (!(error instanceof RebuildError)) logger.fatal({ err: error }, 'rebuild failed');
    throw error;
  }
});
// Kafka clients may keep the event loop alive after the swap: end with the code runCli set.
process.exit();
