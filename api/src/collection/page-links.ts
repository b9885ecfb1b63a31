import type { KeysetPosition } from '@pda/projections/read';
import type { CursorPosition } from './cursor.ts';

/**
 * links.next and links.prev of a keyset page (every collection: the resources' lists and the
 * deletions feed). `at` is where the request's cursor pointed (none on the first page); `link`
 * turns a boundary position into the URL of the page beyond it (no position: the first page).
 * `reached` is where a page that stopped at its budget stopped (Page.reached, in the direction of
 * the request): the page beyond it continues from there, not from its last row, which may lie far
 * before it or not exist (docs/public-data-api-v1.md, "Pagination": a page may be short).
 */
export function pageLinks<Row>(page: {
  readonly at: CursorPosition | undefined;
  readonly rows: readonly Row[];
  readonly hasMore: boolean;
  readonly reached?: KeysetPosition | undefined;
  positionOf(row: Row): KeysetPosition;
  link(position: CursorPosition | undefined): string;
}): { next: string | null; prev: string | null } {
  const { at, rows, hasMore, reached, positionOf, link } = page;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (at?.direction === 'before') {
    // Came back from a later page: rows follow this one (at least the page we came from). An
    // empty page that stopped short continues forward from where it stopped: nothing before it matched.
    const after = last ? positionOf(last) : reached;
    const before = reached ?? (first && positionOf(first));
    return {
      next: after ? link({ direction: 'after', position: after }) : link(undefined),
      prev: hasMore && before ? link({ direction: 'before', position: before }) : null,
    };
  }
  const after = reached ?? (last && positionOf(last));
  return {
    next: hasMore && after ? link({ direction: 'after', position: after }) : null,
    // The first page has nothing before it; a later page goes back before its first row.
    prev: at ? link({ direction: 'before', position: first ? positionOf(first) : at.position }) : null,
  };
}
