// One JSON line per fault case in .data/fault-campaign/<case>.json, the campaign's record
// (docs/resilience.md): what was done, what happened, how long recovery took, the differences the
// final comparison with PostgreSQL found and the requests that failed, and whether the test's
// assertions held. The figures are measured before the assertions, so the line is written again
// when the test finishes (vitest's onTestFinished, which also runs after a timeout): `outcome`
// 'passed' only when every assertion held, else 'failed' with the first failure's message. The
// test also prints it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { onTestFinished } from 'vitest';
import { repoRoot } from '../../src/stack-env.ts';

export interface FaultResult {
  readonly fault: string;
  readonly whatHappened: string;
  /** The figure the case is judged by (the slowest recovery); details in extra fields. */
  readonly recoverySeconds: number | null;
  readonly differences: number;
  readonly failedRequests: number | null;
  readonly [detail: string]: unknown;
}

/**
 * 'unfinished': the test started and has not finished (still running, or its process was killed);
 * 'passed': every assertion of the test held; 'failed': one did not, or the test threw or timed out.
 */
export type Outcome = 'unfinished' | 'passed' | 'failed';

export interface CaseRecord {
  /** The case's figures, once measured (before the assertions). */
  set(result: FaultResult): void;
}

export const campaignDir = () => join(repoRoot, '.data', 'fault-campaign');

/**
 * The record of `caseName`, written at once as 'unfinished' (so a run that never finishes does not
 * leave an earlier run's record in place) and again with the test's outcome when it finishes. Call
 * it in the test, first thing: a test that fails before its figures are measured still leaves a
 * 'failed' record, without them.
 */
export function caseRecord(caseName: string): CaseRecord {
  // A long variant's record sits beside the short one's instead of replacing it.
  const name = longVariant() ? `${caseName}-long` : caseName;
  const file = join(campaignDir(), `${name}.json`);
  const startedAt = new Date().toISOString();
  let result: FaultResult | undefined;
  // Once the test has finished, its outcome stays: a body still running after a timeout may set().
  let verdict: { outcome: Outcome; failure: string | null } = { outcome: 'unfinished', failure: null };
  const write = () => {
    const { outcome, failure } = verdict;
    mkdirSync(campaignDir(), { recursive: true });
    const line = JSON.stringify({
      case: name,
      at: new Date().toISOString(),
      startedAt,
      outcome,
      failure,
      ...result,
    });
    writeFileSync(file, `${line}\n`);
    return line;
  };
  write();
  onTestFinished(({ task }) => {
    const passed = task.result?.state === 'pass';
    const message = task.result?.errors?.[0]?.message ?? `test ended in state ${task.result?.state}`;
    verdict = passed
      ? { outcome: 'passed', failure: null }
      : { outcome: 'failed', failure: stripVTControlCharacters(message).slice(0, 2_000) };
    console.log(`fault campaign: ${write()}`);
  });
  return {
    set(value) {
      result = value;
      write();
    },
  };
}

/** caseRecord(caseName).set(result), for a test that measures before it records. */
export function writeResult(caseName: string, result: FaultResult): void {
  caseRecord(caseName).set(result);
}

/** A process's log lines beside the result (`<case>-<what>.jsonl`), to see what the operator would. */
export function writeLog(caseName: string, what: string, lines: readonly unknown[]): void {
  mkdirSync(campaignDir(), { recursive: true });
  writeFileSync(
    join(campaignDir(), `${caseName}-${what}.jsonl`),
    lines.map((l) => `${JSON.stringify(l)}\n`).join(''),
  );
}

/** Seconds as the records show them, rounded to 0.01 s. */
export const round = (n: number) => Math.round(n * 100) / 100;

/** min / median / max of seconds, rounded to 0.01 s. */
export function spread(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const rounded = (n: number | undefined) => (n === undefined ? null : round(n));
  const mid = sorted.length / 2;
  const median =
    sorted.length === 0
      ? undefined
      : sorted.length % 2
        ? sorted[Math.floor(mid)]
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { n: sorted.length, min: rounded(sorted[0]), median: rounded(median), max: rounded(sorted.at(-1)) };
}

/** Whether the long variants run (PDA_FAULTS_LONG=1): larger loads, longer outages. */
export const longVariant = () => process.env.PDA_FAULTS_LONG === '1';
