/**
 * The ingest worker of bench/api/followers.ts in a process of its own, so the followers' client side
 * (the benchmark's event loop) and ingest's main thread do not delay each other, and its CPU is
 * read from /proc apart from theirs.
 *
 *   node api/parts/followers-ingest-child.ts --group G --prefix P --data-dir D
 *
 * Prints `FOLLOWERS-INGEST caught-up` once the worker's lag on the existing topics is 0, then keeps
 * applying what the pipeline brings until SIGTERM (drain, commit, exit 0).
 */
import { parseArgs } from 'node:util';
import { loadAvscTypes } from '@pda/ingest';
import { benchWorker } from '../../shared/ingest-worker.ts';

const { values: args } = parseArgs({
  options: { group: { type: 'string' }, prefix: { type: 'string' }, 'data-dir': { type: 'string' } },
});
const { group, prefix } = args;
const dataDir = args['data-dir'];
if (!group || !prefix || !dataDir) throw new Error('--group, --prefix and --data-dir are required');

const { worker } = benchWorker({
  groupId: group,
  topicPrefix: prefix,
  dataDir,
  avscTypes: await loadAvscTypes(),
});
process.on('SIGTERM', () => worker.stop());
const running = worker.run();
for (;;) {
  const lag = worker.source()?.lag();
  if (lag?.measured && lag.total === 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
process.stdout.write('FOLLOWERS-INGEST caught-up\n');
await running;
process.exit(0);
