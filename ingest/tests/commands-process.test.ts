import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The process contract of the replay and rebuild commands, the shell ops' CLIs share
// (@pda/projections/cli): bad arguments → one `error:` line, a blank line, the usage, exit 2.
// Nothing here reaches Kafka: rebuild is refused on its configuration before it connects.
const dir = mkdtempSync(join(tmpdir(), 'pda-ingest-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(script: string, args: string[], env: Record<string, string> = {}) {
  const path = fileURLToPath(new URL(`../src/${script}`, import.meta.url));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [path, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }),
    );
  });
}

function expectUsageError(out: { code: number | null; stderr: string }, message: RegExp, usage: string) {
  expect(out.code, out.stderr).toBe(2);
  const [first, blank, third] = out.stderr.split('\n');
  expect(first).toMatch(message);
  expect(blank).toBe('');
  expect(third).toContain(usage);
}

describe('replay and rebuild commands', () => {
  it('replay: an unknown option, a missing file or a bad batch size is exit 2 with the usage', async () => {
    expectUsageError(
      await run('replay-main.ts', ['--frobnicate']),
      /^error: Unknown option '--frobnicate'/,
      'usage: replay',
    );
    expectUsageError(
      await run('replay-main.ts', ['--file', join(dir, 'none.jsonl'), '--data-dir', dir]),
      /^error: no such file: /,
      'usage: replay',
    );
    writeFileSync(join(dir, 'empty.jsonl'), '');
    expectUsageError(
      await run('replay-main.ts', [
        '--file',
        join(dir, 'empty.jsonl'),
        '--data-dir',
        dir,
        '--batch-size',
        '0',
      ]),
      /^error: --batch-size must be a positive integer$/,
      'usage: replay',
    );
  });

  it('replay: accepts the `--` pnpm may forward, and prints one JSON line', async () => {
    writeFileSync(join(dir, 'empty.jsonl'), '');
    const out = await run('replay-main.ts', [
      '--',
      '--file',
      join(dir, 'empty.jsonl'),
      '--data-dir',
      join(dir, 'data'),
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ events: 0 });
  });

  it('rebuild: an unknown option or a bad configuration is exit 2 with the usage', async () => {
    expectUsageError(
      await run('rebuild-main.ts', ['--now']),
      /^error: Unknown option '--now'/,
      'usage: rebuild',
    );
    expectUsageError(
      await run('rebuild-main.ts', [], { INGEST_DATA_DIR: dir, INGEST_KAFKA_BROKRES: 'x' }),
      /^error: invalid ingest configuration: .*INGEST_KAFKA_BROKRES: unknown setting/,
      'usage: rebuild',
    );
  });
});
