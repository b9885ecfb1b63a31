// What the api should present for a company, computed from PostgreSQL alone: each resource's rows
// (in the projection's representation: exact decimals as text, ISO UTC µs timestamps) rendered
// through the registry's document shapes and relations (@pda/schemas/registry), the declaration
// the api renders from. The oracle of tests that compare a partner's copy with the source.
import { type DocumentShape, RESOURCES, type ResourceName, TABLES } from '@pda/schemas/registry';
import type pg from 'pg';
import { pgRows, type Row } from './projection-vs-postgres.ts';

/** The column → SQLite type map of a table, from the registry. */
function columnTypes(table: keyof typeof TABLES): Map<string, string> {
  return new Map(
    Object.entries(TABLES[table].columns).map(([column, type]) => [
      column,
      type.replace('?', '').toUpperCase(),
    ]),
  );
}

function rowsOf(pool: pg.Pool, table: keyof typeof TABLES, companyId: string): Promise<Row[]> {
  return pgRows(pool, table, 'company_id = $1', [companyId], columnTypes(table));
}

function render(shape: DocumentShape, row: Row): Row {
  return Object.fromEntries(
    Object.entries(shape).map(([member, source]) => [
      member,
      typeof source === 'string' ? row[source] : render(source, row),
    ]),
  );
}

// The api orders a many-relation by id (SQLite's binary text order).
const byId = (a: Row, b: Row) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0);

/**
 * The documents of `resource` in `companyId` by id, every member, with every relation included
 * (`include=contacts` on sites, `include=category` on equipment).
 */
export async function documentsFromPostgres(
  pool: pg.Pool,
  companyId: string,
  resource: ResourceName,
): Promise<Map<string, Row>> {
  const def = RESOURCES[resource];
  const rows = await rowsOf(pool, def.table, companyId);
  const documents = new Map(
    rows.map((row) => [row.id as string, { row, document: render(def.document, row) }]),
  );
  for (const [name, relation] of Object.entries(def.relations)) {
    const related = (await rowsOf(pool, relation.table as keyof typeof TABLES, companyId)).sort(byId);
    for (const { row, document } of documents.values()) {
      if (relation.cardinality === 'many') {
        document[name] = related
          .filter((r) => r[relation.key] === row.id)
          .map((r) => render(relation.document, r));
      } else {
        const one = related.find((r) => r.id === row[relation.key]);
        document[name] = one === undefined ? null : render(relation.document, one);
      }
    }
  }
  return new Map([...documents].map(([id, { document }]) => [id, document]));
}
