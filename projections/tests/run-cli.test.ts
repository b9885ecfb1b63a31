import { afterEach, describe, expect, it, vi } from 'vitest';
import { cliArgs, runCli, UsageError, wholeNumber } from '../src/cli/run-cli.ts';

afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

async function outcome(main: () => Promise<void>): Promise<{ code: unknown; stderr: string }> {
  let stderr = '';
  process.exitCode = undefined;
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  await runCli('usage: tool [--x]', main);
  return { code: process.exitCode, stderr };
}

describe('the command-line shell', () => {
  it('drops only a leading `--` (pnpm may or may not forward it)', () => {
    expect(cliArgs(['--', '--seed', '--'])).toEqual(['--seed', '--']);
    expect(cliArgs(['--seed', '7'])).toEqual(['--seed', '7']);
  });

  it('answers a usage error with one line, a blank line and the usage: exit 2', async () => {
    expect(await outcome(async () => Promise.reject(new UsageError('--x is required')))).toEqual({
      code: 2,
      stderr: 'error: --x is required\n\nusage: tool [--x]\n',
    });
  });

  it('answers any other failure with its first line only: exit 1', async () => {
    expect(await outcome(async () => Promise.reject(new Error('key not found\n    at stack')))).toEqual({
      code: 1,
      stderr: 'error: key not found\n',
    });
    expect((await outcome(async () => undefined)).code).toBeUndefined();
  });

  it('reads whole numbers and names the option it refuses', () => {
    expect(wholeNumber('sites', undefined, 5)).toBe(5);
    expect(wholeNumber('sites', '30000', 5)).toBe(30000);
    expect(() => wholeNumber('sites', '-1', 5)).toThrow('--sites must be a whole number >= 0, got "-1"');
  });
});
