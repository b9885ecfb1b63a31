/**
 * The Avro path over REAL captured events: the capture run wrote the same changes twice, once through
 * JsonConverter (test/fixtures/debezium/) and once through the registry's Avro converter
 * (test/fixtures/debezium-avro/). Both must decode into the same `Change`s and apply to the same
 * projection, whatever the format; a writer schema that no longer fits the table dead-letters.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';
import { loadTableSchema } from '@pda/schemas';
import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import {
  columnTypesFromAvsc,
  createDecoder,
  type DecodeResult,
  type RawRecord,
  schemaIdOf,
  WriterSchemas,
} from '../src/decode/index.ts';
import { avroEventEncoder, encodeEvent, sampleRow, uuidFor } from '../src/testing/index.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { dumpDataDir } from './support/dump.ts';
import { AVRO_FIXTURE_DIR, avroFixture, fixtureRecords } from './support/fixtures.ts';

const avscTypes = (table: SourceTable) => columnTypesFromAvsc(loadTableSchema(table));
const json = fixtureRecords();
const { records: avro, writerSchemas } = avroFixture();
const decoder = () =>
  createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes, writerSchemas });

/** A change without where it came from; snapshot reads keep their own snapshot point per connector. */
function comparable(result: DecodeResult) {
  if (result.type !== 'change') return result;
  const { origin: _origin, ...change } = result.change;
  if (change.kind === 'upsert' && change.op === 'r') return { ...change, position: 'snapshot point' };
  return change;
}

describe('Avro records of the captured scenario', () => {
  const decodeJson = decoder();
  const decodeAvro = decoder();
  const pairs = json.map((record, i) => [record, avro[i] as RawRecord] as const);

  it('are wire-format records whose schemas the fixture holds', () => {
    expect(avro).toHaveLength(json.length);
    for (const record of avro) {
      for (const bytes of [record.key, record.value]) {
        if (bytes === null) continue;
        const id = schemaIdOf(bytes);
        expect(id).toBeDefined();
        expect(writerSchemas.has(id as number)).toBe(true);
      }
    }
  });

  it.each(pairs.map(([j, a]) => [`${j.topic}@${j.offset}`, j, a] as const))(
    '%s decodes to the same change as its JSON twin',
    (_name, jsonRecord, avroRecord) => {
      expect(avroRecord.topic).toBe(jsonRecord.topic);
      expect(comparable(decodeAvro(avroRecord))).toEqual(comparable(decodeJson(jsonRecord)));
    },
  );

  it('apply to the same projection as the JSON records', async () => {
    const fromJson = tempDataDir();
    const a = await applyRecords(fromJson, json);
    const fromAvro = tempDataDir();
    const b = await applyRecords(fromAvro, avro, 10_000, writerSchemas);
    expect(b.totals.deadLettered).toBe(0);
    expect(b.totals).toEqual(a.totals);
    // Snapshot reads carry each connector's own snapshot point: compare what was projected.
    const strip = (dump: ReturnType<typeof dumpDataDir>) =>
      JSON.parse(JSON.stringify(dump).replace(/"(lsn|source_lsn|position_lsn)":\d+/g, '"$1":0'));
    expect(strip(dumpDataDir(fromAvro))).toEqual(strip(dumpDataDir(fromJson)));
  });

  it('JSON and Avro records mixed in one topic decode each by its own format', () => {
    const decode = decoder();
    const mixed = pairs.map(([j, a], i) => (i % 2 ? a : j));
    const results = mixed.map(decode);
    expect(results.filter((r) => r.type === 'dead-letter')).toEqual([]);
  });
});

describe('Avro writer schema versions', () => {
  const sitesUpsert = avro.find((r) => {
    const d = decoder()(r);
    return (
      d.type === 'change' && d.change.kind === 'upsert' && d.change.table === 'sites' && d.change.op === 'c'
    );
  }) as RawRecord;
  const valueId = schemaIdOf(sitesUpsert.value) as number;
  const writer = writerSchemas.get(valueId);
  if (!writer || !('type' in writer)) throw new Error('sites writer schema missing');
  const original = writer.type.fromBuffer(Buffer.from((sitesUpsert.value as Uint8Array).subarray(5))) as {
    source: object;
    after: Record<string, unknown>;
  };
  interface Field {
    name: string;
    type: unknown;
    default?: unknown;
  }
  const envelope = writer.json as { fields: { name: string; type: [string, { fields: Field[] }] }[] };

  /** The sites envelope schema with its row record changed by `edit`, under a new id. */
  function version(
    id: number,
    edit: (fields: Field[]) => Field[],
    row: (after: Record<string, unknown>) => Record<string, unknown>,
  ) {
    const schema = structuredClone(envelope);
    const rowRecord = schema.fields.find((f) => f.name === 'before')?.type[1];
    if (!rowRecord) throw new Error('no before record');
    rowRecord.fields = edit(rowRecord.fields);
    const schemas = new WriterSchemas();
    schemas.add(id, JSON.stringify(schema));
    const type = avsc.Type.forSchema(schema as unknown as avsc.Schema, { wrapUnions: 'auto' });
    // ts_ns exceeds 2^53 (decoded as a BigInt): left out of the re-encoded test record.
    const source = { ...original.source, ts_ns: null };
    const body = type.toBuffer({ ...original, source, ts_ns: null, after: row(original.after) });
    const header = Buffer.from([0, 0, 0, 0, 0]);
    header.writeUInt32BE(id, 1);
    // The key's schema as well, for the same decoder.
    const keyId = schemaIdOf(sitesUpsert.key) as number;
    const keyEntry = writerSchemas.get(keyId);
    if (keyEntry && 'json' in keyEntry) schemas.add(keyId, JSON.stringify(keyEntry.json));
    const record: RawRecord = { ...sitesUpsert, value: Buffer.concat([header, body]) };
    return createDecoder({
      topicPrefix: 'pda',
      bareDecimalMode: 'precise',
      avscTypes,
      writerSchemas: schemas,
    })(record);
  }

  it('a column added at the source decodes with the new version, no restart', () => {
    const result = version(
      90_001,
      (fields) => [...fields, { name: 'gate_code', type: ['null', 'string'], default: null }],
      (after) => ({ ...after, gate_code: '4711' }),
    );
    expect(result.type).toBe('change');
    if (result.type === 'change' && result.change.kind === 'upsert') {
      expect(result.change.row.gate_code).toBe('4711');
    }
  });

  it('a version whose column no longer fits the table dead-letters with the reason', () => {
    const result = version(
      90_002,
      (fields) =>
        fields.map((f) =>
          f.name === 'area' ? { name: 'area', type: ['null', 'string'], default: null } : f,
        ),
      (after) => ({ ...after, area: '12.5 m2' }),
    );
    expect(result).toEqual({
      type: 'dead-letter',
      reason:
        "writer schema 90002 of pda.public.sites does not fit schemas/sites.avsc: column 'area' is string, expected decimal(scale 2)",
    });
  });

  it('a decimal whose scale changed dead-letters (Avro compatibility does not look at it)', () => {
    const result = version(
      90_003,
      (fields) =>
        fields.map((f) =>
          f.name === 'latitude'
            ? {
                ...f,
                type: [
                  'null',
                  {
                    type: 'bytes',
                    scale: 4,
                    precision: 9,
                    logicalType: 'decimal',
                    'connect.name': 'org.apache.kafka.connect.data.Decimal',
                  },
                ],
              }
            : f,
        ),
      (after) => after,
    );
    expect(result.type).toBe('dead-letter');
    expect(result.type === 'dead-letter' && result.reason).toContain(
      "column 'latitude' is decimal(scale 4), expected decimal(scale 6)",
    );
  });

  it('a record whose schema was never fetched is a dead letter only without a registry', () => {
    const bare = createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes });
    expect(bare(sitesUpsert)).toMatchObject({ type: 'dead-letter' });
    expect((bare(sitesUpsert) as { reason: string }).reason).toContain('INGEST_SCHEMA_REGISTRY_URL');
  });
});

describe('generated Avro events (avroEventEncoder, for tests and benchmarks)', () => {
  const byName = new Map<string, { id: number; json: unknown }>();
  const file = JSON.parse(readFileSync(join(AVRO_FIXTURE_DIR, 'schemas.json'), 'utf8')) as Record<
    string,
    { name: string; namespace?: string }
  >;
  for (const [id, json] of Object.entries(file)) {
    byName.set(json.namespace ? `${json.namespace}.${json.name}` : json.name, { id: Number(id), json });
  }
  const schemaOf = (table: string, kind: 'Key' | 'Envelope') => {
    const found = [...byName].find(([name]) => name.endsWith(`.public.${table}.${kind}`));
    if (!found) throw new Error(`no ${kind} schema of ${table} in the fixture`);
    return found[1];
  };
  const encode = avroEventEncoder(
    (table) => ({
      keyId: schemaOf(table, 'Key').id,
      key: schemaOf(table, 'Key').json,
      valueId: schemaOf(table, 'Envelope').id,
      value: schemaOf(table, 'Envelope').json,
    }),
    { topicPrefix: 'pda' },
  );

  it.each(SOURCE_TABLES.map((t) => [t]))('%s decodes to the same change as its JSON twin', (table) => {
    const input = {
      table,
      op: 'c' as const,
      row: sampleRow(table, 3, uuidFor(1, 7)),
      lsn: 4242,
      tsMs: 1_700_000_000_000,
    };
    const fromAvro = encode(input);
    const fromJson = encodeEvent(input, { inlineSchema: true });
    const decode = decoder();
    const at = { partition: 0, offset: '1' };
    expect(comparable(decode({ ...at, ...fromAvro }))).toEqual(comparable(decode({ ...at, ...fromJson })));
    expect(decode({ ...at, ...fromAvro }).type).toBe('change');
  });
});
