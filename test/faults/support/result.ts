// One JSON line per fault case in .data/fault-campaign/<case>.json, the campaign's record
// (docs/resilience.md): what was done, what happened, how long recovery took, the differences the
// final comparison with PostgreSQL found and the requests that failed. The test also prints it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

export const campaignDir = () => join(repoRoot, '.data', 'fault-campaign');

export function writeResult(caseName: string, result: FaultResult): string {
  mkdirSync(campaignDir(), { recursive: true });
  // A long variant's record sits beside the short one's instead of replacing it.
  const name = longVariant() ? `${caseName}-long` : caseName;
  const file = join(campaignDir(), `${name}.json`);
  const line = JSON.stringify({ case: name, at: new Date().toISOString(), ...result });
  writeFileSync(file, `${line}\n`);
  console.log(`fault campaign: ${line}`);
  return file;
}

/** A process's log lines beside the result (`<case>-<what>.jsonl`), to see what the operator would. */
export function writeLog(caseName: string, what: string, lines: readonly unknown[]): void {
  mkdirSync(campaignDir(), { recursive: true });
  writeFileSync(
    join(campaignDir(), `${caseName}-${what}.jsonl`),
    lines.map((l) => `${JSON.stringify(l)}\n`).join(''),
  );
}

/** min / median / max of seconds, rounded to 0.01 s. */
export function spread(values: readonly number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n: number | undefined) => (n === undefined ? null : Math.round(n * 100) / 100);
  const mid = sorted.length / 2;
  const median =
    sorted.length === 0
      ? undefined
      : sorted.length % 2
        ? sorted[Math.floor(mid)]
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { n: sorted.length, min: round(sorted[0]), median: round(median), max: round(sorted.at(-1)) };
}

/** Whether the long variants run (PDA_FAULTS_LONG=1): larger loads, longer outages. */
export const longVariant = () => process.env.PDA_FAULTS_LONG === '1';
