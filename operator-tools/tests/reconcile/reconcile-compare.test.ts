// reconcile's comparison without a stack: row pairs → differences, the merge of two sorted sides,
// the PostgreSQL → projection mappings, and the stored document checked against a company file
// written by the projections' own apply path (the bytes ingest stores).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCompanyReader } from '@pda/projections/read';
import { buildProjection, makeUpsert, sampleRow } from '@pda/projections/testing';
import { TABLES } from '@pda/schemas/registry';
import { afterAll, describe, expect, it } from 'vitest';
import { compareRow, mergeCompare, type Values } from '../../reconcile/compare.ts';
import { ALL, projectionBatches } from '../../reconcile/projection.ts';
import { sourceExpression, tablePlan } from '../../reconcile/tables.ts';
import type { Difference } from '../../reconcile/types.ts';

const COMPANY = '0b0b0b0b-0000-4000-8000-000000000001';
const services = tablePlan('services');
const grants = tablePlan('api_key_companies');
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A services row in the projection's representation, in registry column order. */
function service(n: number, fields: Record<string, unknown> = {}): unknown[] {
  const row = { ...sampleRow('services', { id: id(n) }), ...fields } as Record<string, unknown>;
  return services.columns.map((column) => row[column]);
}

/** The projection's side of the same row: its values and the stored document ingest renders. */
const stored = (values: unknown[], json = services.render!(values)) => [...values, json];

describe('compareRow', () => {
  it('finds nothing when every column and the stored document agree', () => {
    expect(compareRow(services, COMPANY, service(1), stored(service(1)))).toBeUndefined();
  });

  it('names each differing column with both values, exact decimals compared as text', () => {
    const source = service(1, { client_rate_amount: '125.00', name: 'Plowing' });
    const projected = service(1, { client_rate_amount: '125.0', name: 'Plowing' });
    const difference = compareRow(services, COMPANY, source, stored(projected, services.render!(source)));
    expect(difference).toEqual({
      companyId: COMPANY,
      table: 'services',
      id: id(1),
      kind: 'different',
      columns: [{ name: 'client_rate_amount', source: '125.00', projection: '125.0' }],
    });
  });

  it('tells a number from its text and NULL from an empty string', () => {
    const source = service(1, { client_minimum_minutes: 30, name_for_operators: '' });
    const projected = service(1, { client_minimum_minutes: '30', name_for_operators: null });
    const columns = compareRow(
      services,
      COMPANY,
      source,
      stored(projected, services.render!(source)),
    )?.columns;
    expect(columns?.map((c) => c.name)).toEqual(['name_for_operators', 'client_minimum_minutes']);
  });

  it('compares the stored document with the one rendered from the source row', () => {
    const values = service(1);
    const stale = services.render!(service(1, { name: 'Old name' }));
    const difference = compareRow(services, COMPANY, values, stored(values, stale));
    expect(difference?.columns).toEqual([
      { name: '_json', source: services.render!(values), projection: stale },
    ]);
    expect(JSON.parse(String(difference?.columns?.[0]?.source))).toMatchObject({
      id: id(1),
      name: 'Plowing',
    });
  });

  it('reports a row on one side only as missing or extra, by its key', () => {
    expect(compareRow(services, COMPANY, service(2), undefined)).toEqual({
      companyId: COMPANY,
      table: 'services',
      id: id(2),
      kind: 'missing',
    });
    expect(compareRow(services, COMPANY, undefined, stored(service(3)))?.kind).toBe('extra');
    expect(compareRow(grants, COMPANY, [id(7), COMPANY], undefined)?.id).toBe(`${id(7)}/${COMPANY}`);
  });
});

describe('mergeCompare', () => {
  it('merge-joins two sorted sides in batches of different sizes', async () => {
    const source = [1, 2, 4, 5, 7].map((n) => service(n));
    const projection = [1, 3, 4, 5, 6].map((n) =>
      stored(n === 5 ? service(5, { color: '#000000' }) : service(n), services.render!(service(n))),
    );
    const found: Difference[] = [];
    const counts = await mergeCompare(
      services,
      COMPANY,
      [source.slice(0, 2), source.slice(2)],
      (async function* () {
        for (const row of projection) yield [row] as Values[];
      })(),
      (d) => found.push(d),
    );
    expect(counts).toEqual({ sourceRows: 5, projectionRows: 5 });
    expect(found.map((d) => [d.id, d.kind])).toEqual([
      [id(2), 'missing'],
      [id(3), 'extra'],
      [id(5), 'different'],
      [id(6), 'extra'],
      [id(7), 'missing'],
    ]);
    expect(found[2]?.columns?.map((c) => c.name)).toEqual(['color']);
  });

  it('orders composite keys column by column', async () => {
    const found: Difference[] = [];
    await mergeCompare(
      grants,
      null,
      [
        [
          [id(1), id(2)],
          [id(1), id(3)],
          [id(2), id(1)],
        ],
      ],
      [
        [
          [id(1), id(3)],
          [id(2), id(1)],
          [id(2), id(2)],
        ],
      ],
      (d) => found.push(d),
    );
    expect(found.map((d) => `${d.kind} ${d.id}`)).toEqual([
      `missing ${id(1)}/${id(2)}`,
      `extra ${id(2)}/${id(2)}`,
    ]);
  });
});

describe('the documented mappings (PostgreSQL select expressions)', () => {
  it('exact decimals as numeric text, REAL columns as float8, UTC µs timestamps, arrays as JSON, uuids as text', () => {
    expect(sourceExpression('client_rate_amount', 'numeric', 'text')).toBe('"client_rate_amount"::text');
    expect(sourceExpression('area', 'numeric', 'real?')).toBe('"area"::float8');
    expect(sourceExpression('created_at', 'timestamp with time zone', 'text')).toBe(
      `to_char("created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    );
    expect(sourceExpression('scopes', 'ARRAY', 'text')).toBe('array_to_json("scopes")::text');
    expect(sourceExpression('id', 'uuid', 'text')).toBe('"id"::text');
    expect(sourceExpression('currency', 'character', 'text')).toBe('"currency"::text');
    expect(sourceExpression('name', 'text', 'text')).toBe('"name"');
  });

  it('covers every projected column of every table (the registry is the column list)', () => {
    for (const table of Object.keys(TABLES) as (keyof typeof TABLES)[]) {
      expect(tablePlan(table).columns).toEqual(Object.keys(TABLES[table].columns));
    }
  });
});

describe('against a company file written by the apply path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds no difference between the source rows and what ingest stored, documents included', async () => {
    const rows = {
      sites: sampleRow('sites', { id: id(1), company_id: COMPANY }),
      services: sampleRow('services', { id: id(2), company_id: COMPANY }),
    };
    buildProjection(dir, [makeUpsert('sites', rows.sites, 10), makeUpsert('services', rows.services, 11)]);
    const db = openCompanyReader(dir, COMPANY);
    try {
      for (const [table, row] of Object.entries(rows) as [keyof typeof rows, Record<string, unknown>][]) {
        const plan = tablePlan(table);
        const types = TABLES[table].columns as Record<string, string>;
        // The source in the projection's representation: REAL columns are numbers (float8).
        const source = plan.columns.map((c) =>
          types[c]?.startsWith('real') && row[c] !== null ? Number(row[c]) : row[c],
        );
        const found: Difference[] = [];
        const counts = await mergeCompare(
          plan,
          COMPANY,
          [[source]],
          projectionBatches(db, plan, ALL, 100),
          (d) => found.push(d),
        );
        expect(counts).toEqual({ sourceRows: 1, projectionRows: 1 });
        expect(found).toEqual([]);
      }
    } finally {
      db.close();
    }
  });
});
