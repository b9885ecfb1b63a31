#!/usr/bin/env node
// `pnpm pda projections <command> …` (root package.json) or the `pda` bin of @pda/analysts: the
// analysts' tool for the projection files, read-only by construction (analysts/README.md,
// docs/analysts.md). Bad arguments → one `error:` line and the command's usage, exit 2; anything
// else (a missing data directory or file, a SQL error) → one `error:` line, exit 1.
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import type { CliContext, Command } from './cli/command.ts';
import { companiesCommand } from './commands/companies.ts';
import { describeCommand } from './commands/describe.ts';
import { exportCommand } from './commands/export.ts';
import { snapshotCommand } from './commands/snapshot.ts';
import { sqlCommand } from './commands/sql.ts';

const COMMANDS: readonly Command[] = [
  companiesCommand,
  describeCommand,
  snapshotCommand,
  exportCommand,
  sqlCommand,
];

const USAGE = `usage: pnpm pda projections <command> [options]    (pnpm pda projections <command> --help)
${COMMANDS.map((command) => `  ${command.name.padEnd(10)} ${command.summary}`).join('\n')}
Reads DATA_DIR/control.sqlite and DATA_DIR/companies/<id>.sqlite read-only (--data-dir DIR or
PDA_DATA_DIR), never blocking ingest; writes only the files named by --out.`;

const context: CliContext = {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  now: () => Date.now(),
};

const [area, name, ...rest] = cliArgs();
const command = COMMANDS.find((candidate) => candidate.name === name);

const help = (arg: string | undefined): boolean => arg === '--help' || arg === '-h';

if (help(area) || (area === 'projections' && help(name))) {
  process.stdout.write(`${USAGE}\n`);
} else if (area === 'projections' && command) {
  // The command's own usage for its errors.
  await runCli(command.usage, () => command.run(rest, context));
} else {
  await runCli(USAGE, async () => {
    if (area !== 'projections') {
      throw new UsageError(
        area === undefined
          ? 'name the area: pda projections <command>'
          : `unknown area ${JSON.stringify(area)}: the one area is "projections"`,
      );
    }
    throw new UsageError(
      name === undefined
        ? `a command is required: ${COMMANDS.map((c) => c.name).join(', ')}`
        : `unknown command ${JSON.stringify(name)}`,
    );
  });
}
