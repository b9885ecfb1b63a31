import { RESOURCES, type ResourceDef } from '@pda/schemas/registry';
import { quoteIdent } from '../../model/quote-ident.ts';
import type { CompanyFile } from '../files/company-file.ts';

/**
 * Embedded relations move their parent's change time (docs/architecture.md#change-time-and-updated_since):
 * a partner syncing a resource with `include=<relation>` must see the parent again when only the
 * embedded part changed. Which table embeds which is read from the registry's relations
 * (`RESOURCES[...].relations`), so the row operations name no table. One fresh change time per
 * touch; the rows a touch updates share it.
 */

/** A table's rows as embedded in another table's documents: one registry relation, seen from below. */
export interface Embedding {
  /** The table whose documents embed the rows (the resource's table). */
  readonly parent: string;
  /**
   * 'many': the embedded row's column `key` holds its parent's id (a contact's site_id).
   * 'one': the parent's column `key` holds the embedded row's id (an equipment's category_id).
   */
  readonly cardinality: 'one' | 'many';
  readonly key: string;
}

const NONE: readonly Embedding[] = [];

const EMBEDDINGS: ReadonlyMap<string, readonly Embedding[]> = (() => {
  const byTable = new Map<string, Embedding[]>();
  for (const resource of Object.values(RESOURCES) as ResourceDef[]) {
    for (const relation of Object.values(resource.relations)) {
      const embedding = { parent: resource.table, cardinality: relation.cardinality, key: relation.key };
      byTable.set(relation.table, [...(byTable.get(relation.table) ?? []), embedding]);
    }
  }
  return byTable;
})();

/** How `table`'s rows are embedded in other tables' documents ([] for most tables). */
export function embeddingsOf(table: string): readonly Embedding[] {
  return EMBEDDINGS.get(table) ?? NONE;
}

const PARENT_COLUMNS = new Map<string, readonly string[]>(
  [...EMBEDDINGS].map(([table, embeddings]) => [
    table,
    [...new Set(embeddings.filter((e) => e.cardinality === 'many').map((e) => e.key))],
  ]),
);

/**
 * The columns of `table` that name a parent row ('many' embeddings): read from the stored row
 * before it changes, since a row moving to another parent moves both parents.
 */
export function parentColumns(table: string): readonly string[] {
  return PARENT_COLUMNS.get(table) ?? [];
}

/**
 * After a row of `table` was written or deleted: touches the parents that embed it. `before` and
 * `after` hold the row's parentColumns() values before and after the change (undefined: no row):
 * the parent it belongs to now is touched, then the one it left.
 */
export function touchParents(
  file: CompanyFile,
  table: string,
  id: string,
  before: readonly unknown[] | undefined,
  after: readonly unknown[] | undefined,
): void {
  const columns = parentColumns(table);
  for (const embedding of embeddingsOf(table)) {
    if (embedding.cardinality === 'one') {
      touch(file, embedding.parent, embedding.key, id);
      continue;
    }
    const i = columns.indexOf(embedding.key);
    const now = after?.[i];
    const was = before?.[i];
    if (typeof now === 'string') touch(file, embedding.parent, 'id', now);
    if (typeof was === 'string' && was !== now) touch(file, embedding.parent, 'id', was);
  }
}

/** After a TRUNCATE of an embedded table every parent changed. */
export function touchAllParents(file: CompanyFile, table: string): void {
  for (const { parent } of embeddingsOf(table)) {
    file.statements
      .get(`touch:all:${parent}`, () => `UPDATE ${quoteIdent(parent)} SET _changed_us = ?`)
      .run(file.nextChangeTime());
  }
}

function touch(file: CompanyFile, parent: string, column: string, value: string): void {
  file.statements
    .get(
      `touch:${parent}:${column}`,
      () => `UPDATE ${quoteIdent(parent)} SET _changed_us = ? WHERE ${quoteIdent(column)} = ?`,
    )
    .run(file.nextChangeTime(), value);
}
