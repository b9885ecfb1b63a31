/**
 * `pnpm --filter @pda/ingest replay -- --file events.jsonl --data-dir DIR`: applies captured
 * Debezium records from a JSONL file through the same decode → apply path as the Kafka worker.
 * Prints one JSON summary line; exits 2 on bad arguments.
 */
import { existsSync } from 'node:fs';
import { die, parseCli, userPath } from './cli-args.ts';
import { createLogger } from './logger.ts';
import { replayFile } from './replay/replay.ts';
import { loadAvscTypes } from './schema-types.ts';

const USAGE =
  'replay --file <events.jsonl> --data-dir <dir> [--topic-prefix pda] [--batch-size 20000] [--decimal-mode precise|string] [--log-level info]';
const args = parseCli(
  {
    file: { type: 'string' },
    'data-dir': { type: 'string' },
    'topic-prefix': { type: 'string', default: 'pda' },
    'batch-size': { type: 'string', default: '20000' },
    'decimal-mode': { type: 'string', default: 'precise' },
    'log-level': { type: 'string', default: 'warn' },
  },
  USAGE,
);
if (!args.file || !args['data-dir']) die('--file and --data-dir are required', USAGE);
const file = userPath(args.file);
if (!existsSync(file)) die(`no such file: ${file}`, USAGE);
const batchSize = Number(args['batch-size']);
if (!Number.isInteger(batchSize) || batchSize < 1) die('--batch-size must be a positive integer', USAGE);
const mode = args['decimal-mode'];
if (mode !== 'precise' && mode !== 'string') die('--decimal-mode must be precise or string', USAGE);

const logger = createLogger(args['log-level'] ?? 'warn', 'replay');
const totals = await replayFile({
  file,
  dataDir: userPath(args['data-dir']),
  topicPrefix: args['topic-prefix'] ?? 'pda',
  bareDecimalMode: mode,
  batchSize,
  avscTypes: await loadAvscTypes(logger),
  logger,
});
process.stdout.write(`${JSON.stringify(totals)}\n`);
