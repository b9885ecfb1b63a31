// `pnpm --filter @pda/analysts demo-projection -- [DIR]` (default .data/analysts-demo): the projection
// docs/analysts.md's examples run on (src/testing/seed-projection.ts). Refuses a directory that
// already holds projection files.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliArgs, runCli, UsageError, userPath } from '@pda/projections/cli';
import { seedProjection } from '../src/testing/seed-projection.ts';

const USAGE = 'usage: pnpm --filter @pda/analysts demo-projection -- [DIR]   (default .data/analysts-demo)';

await runCli(USAGE, async () => {
  const args = cliArgs();
  if (args[0] === '--help' || args[0] === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (args.length > 1) throw new UsageError(`unexpected argument ${JSON.stringify(args[1])}`);
  const dir = userPath(args[0] ?? '.data/analysts-demo');
  if (existsSync(join(dir, 'control.sqlite'))) throw new Error(`${dir} already holds projection files`);
  const started = performance.now();
  const { rows } = seedProjection(dir);
  process.stdout.write(
    `${rows} rows projected into ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
});
