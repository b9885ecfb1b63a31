import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURED_TABLES, decimalScale, loadTableSchema, SCHEMAS_DIR } from '../src/index.ts';

describe('schemas/*.avsc', () => {
  it('has exactly one .avsc per captured table', () => {
    const files = readdirSync(SCHEMAS_DIR).filter((f) => f.endsWith('.avsc'));
    expect(files.sort()).toEqual(CAPTURED_TABLES.map((t) => `${t}.avsc`).sort());
  });

  describe.each(CAPTURED_TABLES)('%s', (table) => {
    const schema = loadTableSchema(table);

    it('is the record pda.public.<table>.Value with pg.type on every field', () => {
      expect(schema.json.type).toBe('record');
      expect(`${schema.json.namespace}.${schema.json.name}`).toBe(`pda.public.${table}.Value`);
      for (const field of schema.json.fields) expect(field['pg.type'], field.name).toMatch(/\S/);
    });

    it('gives nullable columns a ["null", T] union with default null', () => {
      for (const field of schema.json.fields) {
        if (Array.isArray(field.type)) {
          expect(field.type[0], field.name).toBe('null');
          expect(field.default, field.name).toBeNull();
        }
      }
    });

    it('produces random rows that are valid and survive an Avro round trip', () => {
      for (let i = 0; i < 200; i++) {
        const row = schema.type.random();
        expect(schema.type.isValid(row)).toBe(true);
        expect(schema.type.fromBuffer(schema.type.toBuffer(row))).toEqual(row);
      }
    });

    it('has the tenant and timestamp columns every table shares', () => {
      const names = schema.columns.map((c) => c.name);
      expect(names).toEqual(expect.arrayContaining(['created_at', 'updated_at']));
      for (const c of schema.columns.filter((c) => c.name.endsWith('_at'))) {
        expect(c.kind, c.name).toBe('zoned-timestamp');
      }
    });
  });

  it('rejects values the PostgreSQL columns would reject', () => {
    const { type } = loadTableSchema('sites');
    const row = type.random() as unknown as Record<string, unknown>;
    const valid = (patch: Record<string, unknown>) => type.isValid({ ...row, ...patch });
    expect(valid({ area: '1234567890.12' })).toBe(true);
    expect(valid({ area: '12345678901.00' })).toBe(false); // 13 digits > precision 12
    expect(valid({ area: '1.005' })).toBe(false); // scale 2
    expect(valid({ area: 1.5 })).toBe(false); // never a float
    expect(valid({ latitude: '-93.265015' })).toBe(true);
    expect(valid({ id: 'not-a-uuid' })).toBe(false);
    expect(valid({ geocoded_at: '2024-01-01 00:00:00' })).toBe(false);
    expect(valid({ geocoded_at: '2024-01-01T00:00:00.123456789Z' })).toBe(true);
  });

  it('tells ingest the scale of decimal columns', () => {
    expect(decimalScale('services', 'client_rate_amount')).toBe(2);
    expect(decimalScale('sites', 'latitude')).toBe(6);
    expect(decimalScale('sites', 'name')).toBeUndefined();
    expect(() => loadTableSchema('pg_class')).toThrow(/no \.avsc/);
  });

  it('keeps the Debezium attributes that avsc would drop, in json and schema()', () => {
    const loaded = loadTableSchema('companies');
    const raw = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'companies.avsc'), 'utf8'));
    expect(loaded.schema()).toEqual(raw);
    const created = loaded.json.fields.find((f) => f.name === 'created_at');
    expect(created?.type).toMatchObject({ 'connect.name': 'io.debezium.time.ZonedTimestamp' });
  });
});
