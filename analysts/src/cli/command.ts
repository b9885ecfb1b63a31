import { once } from 'node:events';
import type { Writable } from 'node:stream';

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
