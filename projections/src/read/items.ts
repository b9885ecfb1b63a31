import { quoteIdent } from '../quote-ident.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import {
  type EquipmentCategoryRow,
  PAGE_TABLE_COLUMNS,
  type PageTable,
  type PageTableRows,
  SITE_CONTACT_COLUMNS,
  type SiteContactRow,
} from './tables.ts';

/** Single records and the embedded relations of a page (one statement per call, not per row). */

export function readById<T extends PageTable>(
  handle: ReadHandle,
  table: T,
  id: string,
): PageTableRows[T] | undefined {
  const statement = handle.statement(`item:${table}`, () => `${selectFrom(table)} WHERE "id" = ?`, {
    raw: true,
  });
  const values = statement.get(id) as unknown[] | undefined;
  return values && rowBuilder<PageTableRows[T]>(PAGE_TABLE_COLUMNS[table] as readonly string[])(values);
}

/** Equipment categories by id (include=category); ids without a row are absent from the map. */
export function readCategoriesByIds(
  handle: ReadHandle,
  ids: readonly string[],
): Map<string, EquipmentCategoryRow> {
  const result = new Map<string, EquipmentCategoryRow>();
  if (ids.length === 0) return result;
  const statement = handle.statement(
    'categories-by-ids',
    () => `${selectFrom('equipment_categories')} WHERE "id" IN (SELECT value FROM json_each(?))`,
    { raw: true },
  );
  const build = rowBuilder<EquipmentCategoryRow>(
    PAGE_TABLE_COLUMNS.equipment_categories as readonly string[],
  );
  for (const values of statement.all(JSON.stringify(ids)) as unknown[][]) {
    const row = build(values);
    result.set(row.id, row);
  }
  return result;
}

/** Contacts of the given sites (include=contacts), each list ordered by contact id. */
export function readContactsBySiteIds(
  handle: ReadHandle,
  siteIds: readonly string[],
): Map<string, SiteContactRow[]> {
  const result = new Map<string, SiteContactRow[]>();
  if (siteIds.length === 0) return result;
  const columns = SITE_CONTACT_COLUMNS.map(quoteIdent).join(', ');
  const statement = handle.statement(
    'contacts-by-site-ids',
    () =>
      `SELECT ${columns} FROM "site_contacts" WHERE "site_id" IN (SELECT value FROM json_each(?)) ORDER BY "site_id", "id"`,
    { raw: true },
  );
  const build = rowBuilder<SiteContactRow>(SITE_CONTACT_COLUMNS);
  for (const values of statement.all(JSON.stringify(siteIds)) as unknown[][]) {
    const row = build(values);
    const list = result.get(row.site_id);
    if (list) list.push(row);
    else result.set(row.site_id, [row]);
  }
  return result;
}

function selectFrom(table: PageTable): string {
  const columns = PAGE_TABLE_COLUMNS[table].map((column) => quoteIdent(String(column))).join(', ');
  return `SELECT ${columns} FROM ${quoteIdent(table)}`;
}
