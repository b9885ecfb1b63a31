/** The real captured Debezium records (test/fixtures/debezium/events.jsonl, see its README). */
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
  if (!existsSync(FIXTURE_FILE)) return [];
  return readFileSync(FIXTURE_FILE, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => {
      const parsed = parseReplayLine(line, i + 1);
      if (!('record' in parsed)) throw new Error(`fixture line ${i + 1}: ${parsed.invalid}`);
      return parsed.record;
    });
}
