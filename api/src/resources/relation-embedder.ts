import { documentRenderer, type Json, type ReadHandle, readRowsWhereIn } from '@pda/projections';
import type { ColumnName, RelationDef, TableName } from '@pda/schemas/registry';

/**
 * Adds one relation (`include=<member>`) to a page's documents with a single read for the whole
 * page, as the registry's RelationDef describes it: `one` looks the related rows up by the id in
 * the resource's `key` column (null when unknown: deleted, or not projected yet); `many` collects
 * the related rows whose `key` column holds the resource's id (ordered by id, [] when none).
 */
export interface RelationEmbedder {
  readonly member: string;
  (handle: ReadHandle, rows: readonly object[], documents: Json[]): void;
}

export function relationEmbedder(member: string, relation: RelationDef): RelationEmbedder {
  const table = relation.table as TableName;
  const render = documentRenderer(relation.document);
  const embed =
    relation.cardinality === 'one'
      ? (handle: ReadHandle, rows: readonly object[], documents: Json[]) => {
          const ids = rows.map((row) => keyValue(row, relation.key));
          const known = [...new Set(ids.filter((id) => id !== null))];
          const related = readRowsWhereIn(handle, table, 'id' as ColumnName<TableName>, known);
          documents.forEach((document, index) => {
            const id = ids[index];
            const row = id === null || id === undefined ? undefined : related.get(id)?.[0];
            document[member] = row ? render(row) : null;
          });
        }
      : (handle: ReadHandle, rows: readonly object[], documents: Json[]) => {
          const ids = rows.map((row) => String(keyValue(row, 'id')));
          const related = readRowsWhereIn(handle, table, relation.key as ColumnName<TableName>, ids);
          documents.forEach((document, index) => {
            document[member] = (related.get(ids[index]!) ?? []).map(render);
          });
        };
  return Object.assign(embed, { member });
}

/** A key column's value; null stays null (a nullable key refers to nothing). */
function keyValue(row: object, column: string): string | null {
  const value = (row as Record<string, unknown>)[column];
  return value === null || value === undefined ? null : String(value);
}
