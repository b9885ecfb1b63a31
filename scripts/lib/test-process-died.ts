// Tells scripts/test.sh whether a vitest run ended because its test process died under it — not
// because a test failed — so that the run is worth once more:
//
//   node scripts/lib/test-process-died.ts REPORT.json RUN.log   # exit 0: died, 1: did not
//
// Node 24's V8 can abort a process on its own: `Check failed: jit_page.has_value()` (a race in the
// JIT-page registry that every isolate of a process shares, hit when isolates come and go — the
// e2e files start ingest in-process, and its apply thread is one more isolate each time; reported
// upstream as nodejs/node#64500 and kin, not fixed in any 24.x). The process exits with V8's
// fatal-error banner and vitest writes no report. A run whose report exists is never "died":
// its failures are real and stay counted.
import { readFileSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// What a runner's death prints: V8's fatal-error banner, or the pool's lost channel to a worker
// that died (tinypool's ProcessWorker.send after the child has gone).
const DEATH_SIGNATURES = [/^# Fatal error in /m, /^# Check failed: /m, /ERR_IPC_CHANNEL_CLOSED/];

export function testProcessDied(reportWritten: boolean, runLog: string): boolean {
  if (reportWritten) return false;
  return DEATH_SIGNATURES.some((signature) => signature.test(runLog));
}

function reportExists(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [report, log] = process.argv.slice(2);
  if (report === undefined || log === undefined) {
    console.error('usage: node scripts/lib/test-process-died.ts REPORT.json RUN.log');
    process.exit(2);
  }
  process.exit(testProcessDied(reportExists(report), readLog(log)) ? 0 : 1);
}
