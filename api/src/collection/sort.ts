import { SORT_COLUMNS, type SortColumn, type SortKey } from '@pda/projections/read';
import { invalidParameter } from '../errors/api-error.ts';

/**
 * `sort` (api/README.md): comma-separated fields of id, name, created_at, updated_at; a leading `-`
 * means descending. `id` closes the order (with the direction of the last listed field, so
 * `-name` walks the (name, id) index backwards); fields after `id` change nothing and are dropped.
 * A field named twice (`name,name`, `name,-name`) is refused: the second mention is either
 * redundant or contradicts the first, and a client that sent it meant something we would ignore.
 * `canonical` is what a cursor binds, so `name` and `name,id` are the same query.
 */

export interface ParsedSort {
  readonly keys: readonly SortKey[];
  readonly canonical: string;
}

const DEFAULT_SORT: ParsedSort = { keys: [{ column: 'id', descending: false }], canonical: 'id' };

export function parseSort(value: string | undefined): ParsedSort {
  if (value === undefined) return DEFAULT_SORT;
  const keys: SortKey[] = [];
  const named = new Set<SortColumn>();
  for (const part of value.split(',')) {
    const descending = part.startsWith('-');
    const column = descending ? part.slice(1) : part;
    if (!isSortColumn(column)) {
      throw invalidParameter(
        'sort',
        `unknown sort field ${JSON.stringify(column.slice(0, 50))}; allowed: ${SORT_COLUMNS.join(', ')}`,
      );
    }
    if (named.has(column)) throw invalidParameter('sort', `sort field ${column} is named more than once`);
    named.add(column);
    if (keys.at(-1)?.column !== 'id') keys.push({ column, descending });
  }
  const last = keys[keys.length - 1]!;
  if (last.column !== 'id') keys.push({ column: 'id', descending: last.descending });
  return { keys, canonical: keys.map((key) => `${key.descending ? '-' : ''}${key.column}`).join(',') };
}

function isSortColumn(value: string): value is SortColumn {
  return (SORT_COLUMNS as readonly string[]).includes(value);
}
