import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testProcessDied } from '../../scripts/lib/test-process-died.ts';

// The tail of the CI run of 2026-12-02 whose e2e-containers process V8 aborted.
const v8Abort = [
  'container stack ready in 19 s',
  '#',
  '# Fatal error in , line 0',
  '# Check failed: jit_page.has_value().',
  '#',
  ' 2: 0x27b2103 V8_Fatal(char const*, ...) [node (vitest 1)]',
  'Error: Channel closed',
  "Serialized Error: { code: 'ERR_IPC_CHANNEL_CLOSED' }",
].join('\n');
const failedTest = [
  ' FAIL  test/ingest-pipeline.e2e.test.ts > applies a batch',
  'AssertionError: expected 2 to be 3',
  ' Test Files  1 failed | 1 passed (2)',
].join('\n');

describe('test-process-died', () => {
  it('is a death when no report was written and V8 printed its fatal-error banner', () => {
    expect(testProcessDied(false, v8Abort)).toBe(true);
  });

  it('is a death when the pool lost its channel to a worker and no report was written', () => {
    expect(testProcessDied(false, "Serialized Error: { code: 'ERR_IPC_CHANNEL_CLOSED' }")).toBe(true);
  });

  it('is never a death when the report was written: its failures stay counted', () => {
    expect(testProcessDied(true, v8Abort)).toBe(false);
  });

  it('is not a death when the run ended without a report for another reason', () => {
    expect(testProcessDied(false, failedTest)).toBe(false);
    expect(testProcessDied(false, '')).toBe(false);
  });

  it('answers scripts/test.sh by its exit status, reading the report and the log from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-died-'));
    const log = join(dir, 'run.log');
    writeFileSync(log, v8Abort);
    const run = (report: string) => {
      try {
        execFileSync(process.execPath, ['scripts/lib/test-process-died.ts', report, log]);
        return 0;
      } catch (error) {
        return (error as { status: number }).status;
      }
    };
    expect(run(join(dir, 'missing.json'))).toBe(0);
    writeFileSync(join(dir, 'written.json'), '{"numPassedTests":1}');
    expect(run(join(dir, 'written.json'))).toBe(1);
  });
});
