// Prints one closing line for the whole run, 'tests: N passed, N failed, N skipped', from vitest's
// JSON reports, counting the contract-check step as one more test. A missing report counts as a failure.
// Usage: summarize-results.mjs UNIT.json E2E.json CONTRACT_STATUS [MORE.json...]
import { existsSync, readFileSync } from 'node:fs';

const [unitReport, e2eReport, contractStatus, ...moreReports] = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of [unitReport, e2eReport, ...moreReports]) {
  if (!file || !existsSync(file)) {
    failed += 1;
    console.log(`missing test report: ${file}`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests + (report.numFailedTestSuites ?? 0);
  skipped += report.numPendingTests + report.numTodoTests;
}
if (contractStatus !== undefined) {
  if (contractStatus === '0') passed += 1;
  else failed += 1;
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
