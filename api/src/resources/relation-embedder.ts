import { type ReadHandle, readRowsWhereIn } from '@pda/projections';
import type { RelationDef, TableName } from '@pda/schemas/registry';

/**
 * Adds one relation (`include=<member>`) to a page's JSON texts with a single read for the whole
 * page, splicing the related rows' stored documents in as the last member, as the registry's
 * RelationDef describes it: `one` looks the related row up by the id in the resource's `key`
 * column (null when unknown: deleted, or not projected yet); `many` collects the related rows
 * whose `key` column holds the resource's id (ordered by id, [] when none).
 */
export interface RelationEmbedder {
  readonly member: string;
  (handle: ReadHandle, rows: readonly Record<string, unknown>[], documents: string[]): void;
}

export function relationEmbedder(member: string, relation: RelationDef): RelationEmbedder {
  const table = relation.table as TableName;
  const prefix = `,${JSON.stringify(member)}:`;
  const splice = (document: string, value: string) => `${document.slice(0, -1)}${prefix}${value}}`;
  const embed =
    relation.cardinality === 'one'
      ? (() => {
          const columns = ['_json', 'id'];
          return (handle: ReadHandle, rows: readonly Record<string, unknown>[], documents: string[]) => {
            const ids = rows.map((row) => keyValue(row, relation.key));
            const known = [...new Set(ids.filter((id) => id !== null))];
            const related = readRowsWhereIn(handle, table, 'id', known, columns);
            documents.forEach((document, index) => {
              const id = ids[index];
              const row = id === null || id === undefined ? undefined : related.get(id)?.[0];
              documents[index] = splice(document, row ? (row._json as string) : 'null');
            });
          };
        })()
      : (() => {
          const columns = ['_json', 'id', relation.key];
          return (handle: ReadHandle, rows: readonly Record<string, unknown>[], documents: string[]) => {
            const ids = rows.map((row) => String(row.id));
            const related = readRowsWhereIn(handle, table, relation.key, ids, columns);
            documents.forEach((document, index) => {
              const group = related.get(ids[index]!) ?? [];
              documents[index] = splice(document, `[${group.map((row) => row._json as string).join(',')}]`);
            });
          };
        })();
  return Object.assign(embed, { member });
}

/** A key column's value; null stays null (a nullable key refers to nothing). */
function keyValue(row: Record<string, unknown>, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : String(value);
}
