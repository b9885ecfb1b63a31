// Every .avsc must describe its table as the live PostgreSQL catalog has it: same columns,
// nullability, numeric precision/scale, type family and exact type. Any drift between
// dev-world/db/schema.sql (as applied) and schemas/ fails here.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURED_TABLES, type ColumnKind, loadTableSchema } from '../src/index.ts';

interface CatalogColumn {
  table_name: string;
  column_name: string;
  is_nullable: 'YES' | 'NO';
  data_type: string;
  udt_name: string;
  numeric_precision: number | null;
  numeric_scale: number | null;
  pg_type: string;
}

// information_schema.data_type → the .avsc kind that may represent it.
function kindOf(c: CatalogColumn): ColumnKind | `unmapped ${string}` {
  switch (c.data_type) {
    case 'uuid':
      return 'uuid';
    case 'text':
    case 'character':
    case 'character varying':
      return 'string';
    case 'integer':
    case 'smallint':
      return 'int';
    case 'numeric':
      return 'decimal';
    case 'timestamp with time zone':
      return 'zoned-timestamp';
    case 'ARRAY':
      return c.udt_name === '_text' ? 'string-array' : `unmapped array ${c.udt_name}`;
    default:
      return `unmapped ${c.data_type}`;
  }
}

let client: pg.Client;
const catalog = new Map<string, CatalogColumn[]>();

beforeAll(async () => {
  const env = process.env;
  client = new pg.Client({
    host: env.PDA_PG_HOST ?? '127.0.0.1',
    port: Number(env.PDA_PG_PORT ?? 55432),
    database: env.PDA_PG_DATABASE ?? 'pda',
    user: env.PDA_PG_USER ?? 'pda',
    password: env.PDA_PG_PASSWORD ?? 'pda',
  });
  await client.connect();
  const { rows } = await client.query<CatalogColumn>(
    `SELECT c.table_name, c.column_name, c.is_nullable, c.data_type, c.udt_name,
            c.numeric_precision, c.numeric_scale,
            format_type(a.atttypid, a.atttypmod) AS pg_type
       FROM information_schema.columns c
       JOIN pg_attribute a
         ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
        AND a.attname = c.column_name
      WHERE c.table_schema = 'public' AND c.table_name = ANY($1)
      ORDER BY c.table_name, c.ordinal_position`,
    [CAPTURED_TABLES],
  );
  for (const row of rows) catalog.set(row.table_name, [...(catalog.get(row.table_name) ?? []), row]);
});

afterAll(async () => {
  await client?.end();
});

describe.each(CAPTURED_TABLES)('%s.avsc against the PostgreSQL catalog', (table) => {
  it('has the same columns in the same order', () => {
    const live = catalog.get(table)?.map((c) => c.column_name);
    expect(live, `table public.${table} is missing`).toBeDefined();
    expect(loadTableSchema(table).columns.map((c) => c.name)).toEqual(live);
  });

  it('agrees on nullability, type family, exact type, precision and scale', () => {
    const columns = new Map(loadTableSchema(table).columns.map((c) => [c.name, c]));
    for (const live of catalog.get(table) ?? []) {
      const avsc = columns.get(live.column_name);
      const where = `${table}.${live.column_name}`;
      expect(avsc, where).toBeDefined();
      if (!avsc) continue;
      expect(avsc.nullable, `${where} nullable`).toBe(live.is_nullable === 'YES');
      expect(avsc.kind, `${where} type family`).toBe(kindOf(live));
      expect(avsc.pgType, `${where} pg.type`).toBe(live.pg_type);
      if (live.data_type === 'numeric') {
        expect([avsc.precision, avsc.scale], `${where} precision/scale`).toEqual([
          live.numeric_precision,
          live.numeric_scale,
        ]);
      }
    }
  });
});
