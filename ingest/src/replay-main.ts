/**
 * `pnpm --filter @pda/ingest replay -- --file events.jsonl --data-dir DIR`: applies captured
 * Debezium records from a JSONL file through the same decode → apply path as the Kafka worker.
 * JSON lines, and Avro lines with `--schema-registry-url` (replay/replay.ts).
 * Prints one JSON summary line; exit 2 on bad arguments, 1 on any other failure (one line).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError, userPath } from '@pda/projections/cli';
import { createLogger } from './logger.ts';
import { replayFile } from './replay/replay.ts';
import { loadAvscTypes } from './schema-types.ts';

const USAGE =
  'usage: replay --file <events.jsonl> --data-dir <dir> [--topic-prefix pda] [--batch-size 20000] [--decimal-mode precise|string] [--schema-registry-url <url>] [--log-level info]';

await runCli(USAGE, async () => {
  const { values: args } = parseArgs({
    args: cliArgs(),
    strict: true,
    allowPositionals: false,
    options: {
      file: { type: 'string' },
      'data-dir': { type: 'string' },
      'topic-prefix': { type: 'string', default: 'pda' },
      'batch-size': { type: 'string', default: '20000' },
      'decimal-mode': { type: 'string', default: 'precise' },
      'log-level': { type: 'string', default: 'warn' },
      // The registry's Confluent-compatible API (e.g. http://127.0.0.1:58081/apis/ccompat/v7), for Avro lines.
      'schema-registry-url': { type: 'string' },
    },
  });
  if (!args.file || !args['data-dir']) throw new UsageError('--file and --data-dir are required');
  const file = userPath(args.file);
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const batchSize = Number(args['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new UsageError('--batch-size must be a positive integer');
  }
  const mode = args['decimal-mode'];
  if (mode !== 'precise' && mode !== 'string')
    throw new UsageError('--decimal-mode must be precise or string');

  const registry = args['schema-registry-url'];
  if (registry !== undefined && !/^https?:\/\/[^\s]+$/.test(registry)) {
    throw new UsageError('--schema-registry-url must be an http(s) URL');
  }

  const logger = createLogger(args['log-level'], 'replay');
  const totals = await replayFile({
    file,
    dataDir: userPath(args['data-dir']),
    topicPrefix: args['topic-prefix'],
    bareDecimalMode: mode,
    batchSize,
    avscTypes: await loadAvscTypes(logger),
    logger,
    schemaRegistryUrl: registry,
  });
  process.stdout.write(`${JSON.stringify(totals)}\n`);
});
