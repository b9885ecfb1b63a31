/**
 * The real captured Debezium records (test/fixtures/debezium/events.jsonl, see its README). The file
 * is committed: missing or empty, the tests that read it fail rather than skip (a moved fixture must
 * not turn into silently skipped tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawRecord } from '../../src/decode/index.ts';
import { parseReplayLine } from '../../src/replay/read-jsonl.ts';

export const FIXTURE_FILE = join(
  fileURLToPath(new URL('.', import.meta.url)),
  '../../../test/fixtures/debezium/events.jsonl',
);

export function fixtureRecords(): RawRecord[] {
  if (!existsSync(FIXTURE_FILE)) {
    throw new Error(
      `captured fixture missing: ${FIXTURE_FILE} (committed; re-capture with \`pnpm --filter @pda/test capture-fixtures\`)`,
    );
  }
  const records = readFileSync(FIXTURE_FILE, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      const parsed = parseReplayLine(line, i + 1);
      if (!('record' in parsed)) throw new Error(`fixture line ${i + 1}: ${parsed.invalid}`);
      return parsed.record;
    });
  if (records.length === 0) throw new Error(`captured fixture is empty: ${FIXTURE_FILE}`);
  return records;
}
