// The projection compared with PostgreSQL, row by row and column by column: PostgreSQL's rows are
// selected in the projection's representation (exact decimals as text, ISO UTC µs timestamps), the
// projection's without the writer's bookkeeping columns (`_`-prefixed).
import { openCompanyReader, openControlReader, TENANT_TABLES } from '@pda/projections';
import type pg from 'pg';
import { expect } from 'vitest';

export type Row = Record<string, unknown>;

/** A PostgreSQL column in the projection's representation (exact decimals, ISO UTC µs). */
function pgExpression(column: string, dataType: string, projectionType: string): string {
  const c = `"${column}"`;
  if (dataType === 'timestamp with time zone') {
    return `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  }
  if (dataType === 'numeric') return projectionType === 'REAL' ? `${c}::float8` : `${c}::text`;
  if (dataType === 'ARRAY') return `array_to_json(${c})::text`;
  if (dataType === 'uuid' || dataType === 'character') return `${c}::text`;
  return c;
}

/** Every row of `table` in PostgreSQL, shaped like the projection table (column → its SQLite type), sorted by id. */
export async function pgRows(
  pool: pg.Pool,
  table: string,
  where: string,
  params: unknown[],
  projectionColumns: Map<string, string>,
) {
  const { rows: cols } = await pool.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`,
    [table],
  );
  const select = cols
    .filter((c) => projectionColumns.has(c.column_name))
    .map(
      (c) =>
        `${pgExpression(c.column_name, c.data_type, projectionColumns.get(c.column_name)!)} AS "${c.column_name}"`,
    );
  const { rows } = await pool.query<Row>(`SELECT ${select.join(', ')} FROM ${table} WHERE ${where}`, params);
  return rows.sort(byKey);
}

const byKey = (a: Row, b: Row) =>
  JSON.stringify([a.id, a.api_key_id, a.company_id]).localeCompare(
    JSON.stringify([b.id, b.api_key_id, b.company_id]),
  );

/** Projection rows without the writer's bookkeeping columns, and the column → type map. */
export function projectionRows(
  db: ReturnType<typeof openCompanyReader>,
  table: string,
  where = '1',
  params: unknown[] = [],
) {
  const info = db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; type: string }[];
  const types = new Map(info.filter((c) => !c.name.startsWith('_')).map((c) => [c.name, c.type]));
  const rows = (db.prepare(`SELECT * FROM "${table}" WHERE ${where}`).all(...params) as Row[]).map((r) =>
    Object.fromEntries(Object.entries(r).filter(([k]) => types.has(k))),
  );
  return { rows: rows.sort(byKey), types };
}

/** Compares every row and column of one company's tenant tables, and its control rows. */
export async function expectProjectionEqualsPostgres(
  pool: pg.Pool,
  dataDir: string,
  companyId: string,
): Promise<number> {
  let compared = 0;
  const company = openCompanyReader(dataDir, companyId);
  try {
    for (const table of TENANT_TABLES) {
      const projected = projectionRows(company, table);
      const expected = await pgRows(pool, table, 'company_id = $1', [companyId], projected.types);
      expect(projected.rows, `${table} of ${companyId}`).toEqual(expected);
      compared += expected.length;
    }
  } finally {
    company.close();
  }
  const control = openControlReader(dataDir);
  try {
    const companies = projectionRows(control, 'companies', 'id = ?', [companyId]);
    expect(companies.rows).toEqual(await pgRows(pool, 'companies', 'id = $1', [companyId], companies.types));
    const grants = projectionRows(control, 'api_key_companies', 'company_id = ?', [companyId]);
    expect(grants.rows).toEqual(
      await pgRows(pool, 'api_key_companies', 'company_id = $1', [companyId], grants.types),
    );
    const keyIds = grants.rows.map((g) => g.api_key_id as string);
    const keys = projectionRows(
      control,
      'api_keys',
      `id IN (${keyIds.map(() => '?').join(',') || "''"})`,
      keyIds,
    );
    expect(keys.rows).toEqual(await pgRows(pool, 'api_keys', 'id = ANY($1::uuid[])', [keyIds], keys.types));
  } finally {
    control.close();
  }
  return compared;
}
