import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closingLine, summarize, type VitestReport } from '../../scripts/lib/summarize-results.ts';

// The closing line CI reads must be true in both directions: no failure hidden, none counted twice.
const passing: VitestReport = {
  numPassedTests: 3,
  numFailedTests: 0,
  numPendingTests: 1,
  numTodoTests: 0,
  testResults: [{ name: 'a.test.ts', status: 'passed', assertionResults: [{ status: 'passed' }] }],
};
const oneFailedInNestedDescribes: VitestReport = {
  numPassedTests: 2,
  numFailedTests: 1,
  numPendingTests: 0,
  numTodoTests: 0,
  testResults: [
    { name: 'b.test.ts', status: 'failed', assertionResults: [{ status: 'passed' }, { status: 'failed' }] },
  ],
};
const collectionError: VitestReport = {
  numPassedTests: 0,
  numFailedTests: 0,
  testResults: [{ name: 'c.test.ts', status: 'failed', assertionResults: [] }],
};

function withReports(reports: Record<string, VitestReport>) {
  return (file: string) => reports[file];
}

describe('summarize-results', () => {
  it('counts passing, skipped and steps', () => {
    const totals = summarize(
      ['unit.json:0', 'step:contract-checks:0'],
      withReports({ 'unit.json': passing }),
    );
    expect(closingLine(totals)).toBe('tests: 4 passed, 0 failed, 1 skipped');
  });

  it('counts a test failing inside nested describes once', () => {
    const totals = summarize(['e2e.json:1'], withReports({ 'e2e.json': oneFailedInNestedDescribes }));
    expect([totals.passed, totals.failed]).toEqual([2, 1]);
  });

  it('counts a file that failed without a failed test', () => {
    const totals = summarize(['e2e.json:1'], withReports({ 'e2e.json': collectionError }));
    expect(totals.failed).toBe(1);
    expect(totals.problems[0]).toContain('c.test.ts');
  });

  it('counts a non-zero vitest exit with a clean report (an unhandled error) as a failure', () => {
    const totals = summarize(['unit.json:1'], withReports({ 'unit.json': passing }));
    expect([totals.passed, totals.failed]).toEqual([3, 1]);
  });

  it('counts a missing report and a failed step as failures', () => {
    const totals = summarize(['containers.json:1', 'step:container-images:2'], withReports({}));
    expect(closingLine(totals)).toBe('tests: 0 passed, 2 failed, 0 skipped');
    expect(totals.problems).toEqual([
      'missing or unreadable test report: containers.json',
      'step container-images exited 2',
    ]);
  });

  it('counts a report with no test in it as a failure, not a clean run', () => {
    const empty: VitestReport = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, testResults: [] };
    const totals = summarize(['e2e.json:0'], withReports({ 'e2e.json': empty }));
    expect(closingLine(totals)).toBe('tests: 0 passed, 1 failed, 0 skipped');
    expect(totals.problems).toEqual(['a report with no test in it (nothing was collected)']);
  });

  it('counts a project left out as skipped and names it, so the line differs from a full run', () => {
    const full = summarize(
      ['unit.json:0', 'containers.json:0'],
      withReports({ 'unit.json': passing, 'containers.json': passing }),
    );
    const without = summarize(['unit.json:0', 'not-run:containers'], withReports({ 'unit.json': passing }));
    expect(closingLine(without)).toBe('tests: 3 passed, 0 failed, 2 skipped');
    expect(closingLine(without)).not.toBe(closingLine(full));
    expect(without.problems).toEqual(['not run: containers']);
  });

  it('prints the closing line last when run as a script', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-summary-'));
    writeFileSync(join(dir, 'unit.json'), JSON.stringify(passing));
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    const script = join(import.meta.dirname, '..', '..', 'scripts', 'lib', 'summarize-results.ts');
    const out = execFileSync(process.execPath, [script, `${dir}/unit.json:0`, `${dir}/broken.json:0`], {
      encoding: 'utf8',
    });
    const lines = out.trim().split('\n');
    expect(lines.at(-1)).toBe('tests: 3 passed, 1 failed, 1 skipped');
    expect(lines[0]).toBe(`summary: missing or unreadable test report: ${dir}/broken.json`);
  });
});
