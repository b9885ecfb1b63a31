/**
 * The real captured Debezium records (test/fixtures/debezium/events.jsonl, see its README). The file
 * is committed: missing or empty, the tests that read it fail rather than skip (a moved fixture must
 * not turn into silently skipped tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RawRecord, WriterSchemas } from '../../src/decode/index.ts';
import { parseReplayLine } from '../../src/replay/read-jsonl.ts';

export const FIXTURE_FILE = join(
  fileURLToPath(new URL('.', import.meta.url)),
  '../../../test/fixtures/debezium/events.jsonl',
);

export const AVRO_FIXTURE_DIR = join(
  fileURLToPath(new URL('.', import.meta.url)),
  '../../../test/fixtures/debezium-avro',
);

/**
 * The same scenario's records as the Avro connector wrote them (test/fixtures/debezium-avro/README.md)
 * and their writer schemas, as the resolver would have fetched them from the registry.
 */
export function avroFixture(): { records: RawRecord[]; writerSchemas: WriterSchemas } {
  const records = fixtureRecords(join(AVRO_FIXTURE_DIR, 'events.jsonl'));
  const writerSchemas = new WriterSchemas();
  const schemas = JSON.parse(readFileSync(join(AVRO_FIXTURE_DIR, 'schemas.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  for (const [id, schema] of Object.entries(schemas)) writerSchemas.add(Number(id), JSON.stringify(schema));
  return { records, writerSchemas };
}

export function fixtureRecords(file = FIXTURE_FILE): RawRecord[] {
  const FIXTURE_FILE = file;
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
