import { type ReadHandle, readRowsWhereIn } from '@pda/projections/read';
import { type RelationDef, type TableName, truncatedMember } from '@pda/schemas/registry';

/**
 * Adds one relation (`include=<member>`) to a page's JSON texts with a single read for the whole
 * page, splicing the related rows' stored documents in as the last member, as the registry's
 * RelationDef describes it: `one` looks the related row up by the id in the resource's `key`
 * column (null when unknown: deleted, or not projected yet); `many` collects the related rows
 * whose `key` column holds the resource's id (ordered by id, [] when none), at most `maxEmbedded`
 * of them: a resource with more gets the first ones and `<member>_truncated: true` after them
 * (docs/public-data-api-v1.md, "Embedded contacts"), and the read never goes past one more row
 * per resource (readRowsWhereIn's `perValue`).
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
          const max = relation.maxEmbedded;
          const truncated = `,${JSON.stringify(truncatedMember(member))}:true`;
          return (handle: ReadHandle, rows: readonly Record<string, unknown>[], documents: string[]) => {
            const ids = rows.map((row) => String(row.id));
            const related =
              max === undefined
                ? readRowsWhereIn(handle, table, relation.key, ids, columns)
                : readRowsWhereIn(handle, table, relation.key, ids, columns, max + 1);
            documents.forEach((document, index) => {
              const group = related.get(ids[index]!) ?? [];
              const cut = max !== undefined && group.length > max;
              const embedded = cut ? group.slice(0, max) : group;
              const value = `[${embedded.map((row) => row._json as string).join(',')}]${cut ? truncated : ''}`;
              documents[index] = splice(document, value);
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
