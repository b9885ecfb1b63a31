import type { KeysetPosition } from '@pda/projections/read';
import type { CursorPosition } from './cursor.ts';

/**
 * links.next and links.prev of a keyset page (every collection: the resources' lists and the
 * deletions feed). `at` is where the request's cursor pointed (none on the first page); `link`
 * turns a boundary position into the URL of the page beyond it (no position: the first page).
 */
export function pageLinks<Row>(page: {
  readonly at: CursorPosition | undefined;
  readonly rows: readonly Row[];
  readonly hasMore: boolean;
  positionOf(row: Row): KeysetPosition;
  link(position: CursorPosition | undefined): string;
}): { next: string | null; prev: string | null } {
  const { at, rows, hasMore, positionOf, link } = page;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (at?.direction === 'before') {
    // Came back from a later page: rows follow this one (at least the page we came from).
    return {
      next: last ? link({ direction: 'after', position: positionOf(last) }) : link(undefined),
      prev: hasMore && first ? link({ direction: 'before', position: positionOf(first) }) : null,
    };
  }
  return {
    next: hasMore && last ? link({ direction: 'after', position: positionOf(last) }) : null,
    // The first page has nothing before it; a later page goes back before its first row.
    prev: at ? link({ direction: 'before', position: first ? positionOf(first) : at.position }) : null,
  };
}
