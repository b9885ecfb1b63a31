// Prints the one closing line CI reads, 'tests: N passed, N failed, N skipped', for the whole run.
//
// Usage: node summarize-results.ts [REPORT.json:EXIT_STATUS | step:NAME:EXIT_STATUS | not-run:NAME]...
//   REPORT.json:EXIT_STATUS  a vitest JSON report and the exit status of the vitest run that wrote it
//   step:NAME:EXIT_STATUS    a step that is not a vitest run (the contract checks, the image build),
//                            counted as one test: passed when its status is 0
//   not-run:NAME             a project the run left out on purpose (PDA_TEST_CONTAINERS=0): one
//                            skipped, and named on a line before the closing one
//
// The line must be true in both directions (test/repo-scripts/summarize-results.test.ts):
// - a missing or unreadable report is one failure (a run that crashed or never started);
// - a test counts once, however deep its describe blocks (vitest's numFailedTestSuites counts every
//   failed describe around it, so it is not added);
// - a file that failed without a failed test (an import or collection error) is one failure;
// - a vitest run that exited non-zero with nothing failed in its report (an unhandled error, a
//   failed global setup) is one failure;
// - a report that holds no test at all (nothing collected) is one failure, not a clean run;
// - a project left out is one skipped and named, so the line differs from a full run's.
import { existsSync, readFileSync } from 'node:fs';

export interface Totals {
  passed: number;
  failed: number;
  skipped: number;
  problems: string[];
}

/** The members of a vitest JSON report that the count reads. */
export interface VitestReport {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  testResults?: { name: string; status: string; assertionResults?: { status: string }[] }[];
}

/** Counts one vitest JSON report (already parsed) run with the given exit status. */
export function countReport(report: VitestReport, exitStatus: number): Totals {
  const totals: Totals = {
    passed: report.numPassedTests ?? 0,
    failed: report.numFailedTests ?? 0,
    skipped: 0,
    problems: [],
  };
  totals.skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  if (totals.passed + totals.failed + totals.skipped === 0 && (report.testResults ?? []).length === 0) {
    totals.failed += 1;
    totals.problems.push('a report with no test in it (nothing was collected)');
    return totals;
  }
  for (const file of report.testResults ?? []) {
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed').length;
    if (file.status === 'failed' && failedTests === 0) {
      totals.failed += 1;
      totals.problems.push(`a file failed without a failed test: ${file.name}`);
    }
  }
  if (exitStatus !== 0 && totals.failed === 0) {
    totals.failed += 1;
    totals.problems.push(
      `vitest exited ${exitStatus} with no failed test in its report (an unhandled error?)`,
    );
  }
  return totals;
}

/** Reads the arguments (see the usage above) and returns the totals. */
export function summarize(
  args: readonly string[],
  readReport: (file: string) => VitestReport | undefined = readJsonReport,
): Totals {
  const totals: Totals = { passed: 0, failed: 0, skipped: 0, problems: [] };
  for (const arg of args) {
    const add = (part: Totals) => {
      totals.passed += part.passed;
      totals.failed += part.failed;
      totals.skipped += part.skipped;
      totals.problems.push(...part.problems);
    };
    const step = /^step:([^:]+):(-?\d+)$/.exec(arg);
    if (step) {
      const ok = step[2] === '0';
      add({
        passed: ok ? 1 : 0,
        failed: ok ? 0 : 1,
        skipped: 0,
        problems: ok ? [] : [`step ${step[1]} exited ${step[2]}`],
      });
      continue;
    }
    const notRun = /^not-run:(.+)$/.exec(arg);
    if (notRun) {
      add({ passed: 0, failed: 0, skipped: 1, problems: [`not run: ${notRun[1]}`] });
      continue;
    }
    const separator = arg.lastIndexOf(':');
    const file = separator > 0 ? arg.slice(0, separator) : arg;
    const exitStatus = separator > 0 ? Number(arg.slice(separator + 1)) : 0;
    const report = readReport(file);
    if (report === undefined) {
      add({ passed: 0, failed: 1, skipped: 0, problems: [`missing or unreadable test report: ${file}`] });
      continue;
    }
    add(countReport(report, Number.isInteger(exitStatus) ? exitStatus : 1));
  }
  return totals;
}

function readJsonReport(file: string): VitestReport | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

export function closingLine(totals: Totals): string {
  return `tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`;
}

if (import.meta.main) {
  const totals = summarize(process.argv.slice(2));
  for (const problem of totals.problems) console.log(`summary: ${problem}`);
  console.log(closingLine(totals));
}
