/**
 * `pnpm --filter @pda/ingest rebuild [-- --adopt-directory]`: same INGEST_* environment as `start`.
 * Builds a new projection generation under a new consumer group until caught up, then swaps
 * INGEST_DATA_DIR (a symlink) to it. Prints the generation as one JSON line. Exit 2: bad config or
 * usage; 1: failed (the live generation is unchanged).
 */

import { parseCli } from './cli-args.ts';
import { ConfigError, parseConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { RebuildError, rebuild } from './rebuild/rebuild.ts';
import { loadAvscTypes } from './schema-types.ts';

const args = parseCli(
  { 'adopt-directory': { type: 'boolean', default: false } },
  'rebuild [--adopt-directory]',
);
let config: ReturnType<typeof parseConfig>;
try {
  config = parseConfig(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const logger = createLogger(config.INGEST_LOG_LEVEL, 'rebuild');
const interrupted = new AbortController();
process.once('SIGINT', () => interrupted.abort());
process.once('SIGTERM', () => interrupted.abort());
try {
  const result = await rebuild(config, {
    logger,
    avscTypes: await loadAvscTypes(logger),
    adoptPlainDirectory: args['adopt-directory'] === true,
    signal: interrupted.signal,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (error) {
  if (error instanceof RebuildError) process.stderr.write(`${error.message}\n`);
  else logger.fatal({ err: error }, 'rebuild failed');
  process.exit(1);
}
