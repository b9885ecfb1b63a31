// What the api should present for a company, computed from PostgreSQL alone: each resource's rows
// (in the projection's representation: exact decimals as text, ISO UTC µs timestamps, read by
// sourceRows of @pda/operator-tools/reconcile, reconcile's source side) rendered through the registry's document shapes
// and relations by the projections' reference renderer (documentRenderer), the declaration the api
// renders from. The oracle of tests that compare a partner's copy with the source.
import { sourceRows } from '@pda/operator-tools/reconcile';
import { documentRenderer } from '@pda/projections/read';
import { RESOURCES, type ResourceName, type TableName } from '@pda/schemas/registry';
import type pg from 'pg';

type Row = Record<string, unknown>;

function rowsOf(pool: pg.Pool, table: TableName, companyId: string): Promise<Row[]> {
  return sourceRows(pool, table, { where: 'company_id = $1', params: [companyId] });
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
  const render = documentRenderer(def.document);
  const rows = await rowsOf(pool, def.table, companyId);
  const documents = new Map(rows.map((row) => [row.id as string, { row, document: render(row) }]));
  for (const [name, relation] of Object.entries(def.relations)) {
    const renderRelated = documentRenderer(relation.document);
    const related = (await rowsOf(pool, relation.table as TableName, companyId)).sort(byId);
    for (const { row, document } of documents.values()) {
      if (relation.cardinality === 'many') {
        document[name] = related.filter((r) => r[relation.key] === row.id).map(renderRelated);
      } else {
        const one = related.find((r) => r.id === row[relation.key]);
        document[name] = one === undefined ? null : renderRelated(one);
      }
    }
  }
  return new Map([...documents].map(([id, { document }]) => [id, document]));
}
