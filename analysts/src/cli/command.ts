import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { UsageError } from '@pda/projections/cli';

/** What a command gets from the entry point: nothing below main.ts reads process.* itself. */
export interface CliContext {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly now: () => number;
}

export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  readonly usage: string;
  run(args: string[], context: CliContext): Promise<void>;
}

/** Writes and waits for the stream to drain when its buffer is full (large outputs stream). */
export async function write(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

/** Writes one line to stderr (progress, summaries): stdout stays the command's data. */
export function note(context: CliContext, line: string): void {
  context.stderr.write(`${line}\n`);
}

/**
 * A command's arguments, parsed strictly (unknown options are usage errors). `--help` writes the
 * usage and gives undefined: the command has nothing more to do. More positional arguments than
 * `maxPositionals` is a usage error naming the first one too many.
 */
export async function parseCommandArgs<const O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  usage: string,
  context: CliContext,
  maxPositionals = 0,
) {
  const parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  if ((parsed.values as { help?: unknown }).help) {
    await write(context.stdout, `${usage}\n`);
    return undefined;
  }
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  return parsed;
}
