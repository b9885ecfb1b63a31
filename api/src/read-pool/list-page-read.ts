import {
  type KeysetPosition,
  type PageRequest,
  readPage,
  readSyncState,
  type SyncState,
} from '@pda/projections/read';
import type { ResourceName } from '@pda/schemas/registry';
import type { ProjectionFiles } from '../company-files/projection-files.ts';
import { selectedDocuments } from '../resources/members.ts';
import { resourceNamed } from '../resources/resource.ts';

/**
 * The read of one list page — its rows, their documents and the file's sync state, in one read
 * snapshot — as plain data in and out, so that it runs the same on the event loop and in a reader
 * thread (read-pool.ts). The handler does everything else (cursors, links, the envelope).
 */
export interface ListPageInput {
  readonly companyId: string;
  readonly resource: ResourceName;
  readonly request: PageRequest;
  readonly include: readonly string[];
  /** null: every member (fields[<resource>] absent). */
  readonly fields: readonly string[] | null;
}

export interface ListPageRead {
  /** The records' JSON texts, fields applied, in page order. */
  readonly items: readonly string[];
  /** Sort keys of the page's first and last rows (the cursors need no other row). */
  readonly first: KeysetPosition | undefined;
  readonly last: KeysetPosition | undefined;
  readonly hasMore: boolean;
  readonly reached: KeysetPosition | undefined;
  readonly state: SyncState;
  /** The plan that read the page (projections since-plan.ts): what the request's span reports. */
  readonly plan: string | undefined;
}

export function readListPage(files: ProjectionFiles, input: ListPageInput): ListPageRead {
  const resource = resourceNamed(input.resource);
  const include = new Set(input.include);
  const handle = files.company(input.companyId);
  return handle.snapshot(() => {
    const state = readSyncState(handle);
    const page = readPage(handle, resource.table, input.request, resource.pageColumns(input.request.sort));
    const rows = page.rows as readonly Record<string, unknown>[];
    const documents = resource.documents(handle, rows, include);
    const position = (row: Record<string, unknown> | undefined) =>
      row && input.request.sort.map((key) => String(row[key.column]));
    return {
      items: selectedDocuments(documents, input.fields && new Set(input.fields), include),
      first: position(rows[0]),
      last: position(rows[rows.length - 1]),
      hasMore: page.hasMore,
      reached: page.reached,
      state,
      plan: page.plan,
    };
  });
}
