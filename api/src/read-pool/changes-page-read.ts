import type { TraceLink } from '@pda/projections/model';
import {
  type ChangePosition,
  type ChangesRowsPage,
  type PageTable,
  type ReadHandle,
  readApplyTraces,
  readChangesWithRows,
  readSyncState,
  type SyncState,
} from '@pda/projections/read';
import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import type { ProjectionFiles } from '../company-files/projection-files.ts';
import { ApiError } from '../errors/api-error.ts';
import { isoMicros } from '../resources/iso-micros.ts';
import { resourceNamed } from '../resources/resource.ts';
import { requireTokenCovered } from '../sync/sync-token.ts';

/**
 * The read of one change-feed page (changes/changes-handler.ts) — the changes after a position,
 * each upsert with its document, and the file's sync state, in one read snapshot — as plain data
 * in and out, so that it runs the same on the event loop and in a reader thread (read-pool.ts).
 */
export interface ChangesPageInput {
  readonly companyId: string;
  readonly types: readonly ResourceName[];
  readonly position: ChangePosition;
  readonly limit: number;
  /** include[<type>]: the relations embedded in each type's documents. */
  readonly include: readonly (readonly [ResourceName, readonly string[]])[];
  /** Generation and floor of the walk; undefined on its first page from the start. */
  readonly walk: { readonly generation: number; readonly floorUs: number } | undefined;
  /** The request's span is recorded: read which traced batches wrote the page (appliedIn). */
  readonly traced?: boolean;
}

export interface ChangesPageRead {
  /** Each change's JSON text, in feed order. */
  readonly items: readonly string[];
  readonly last: ChangePosition | undefined;
  readonly hasMore: boolean;
  readonly reached: ChangePosition | undefined;
  readonly state: SyncState;
  /** With `traced`: the ingest batches that applied the page's changes (observability/request-trace.ts). */
  readonly appliedIn?: readonly TraceLink[];
}

/** Batches looked up per page: a page of 200 changes comes from a few batches. */
const APPLIED_IN_MAX = 32;

const TABLE_TYPES = new Map<string, ResourceName>(
  RESOURCE_NAMES.map((name) => [RESOURCES[name].table, name]),
);

export function readChangesPage(files: ProjectionFiles, input: ChangesPageInput): ChangesPageRead {
  const tables = input.types.map((name) => RESOURCES[name].table as PageTable);
  const columns = input.types.map((name) => resourceNamed(name).itemColumns);
  const include = new Map(input.include.map(([type, names]) => [type, new Set(names)]));
  const handle = files.company(input.companyId);
  return handle.snapshot(() => {
    const state = readSyncState(handle);
    requireCovered(input.walk, input.position, state);
    const page = readChangesWithRows(handle, { tables, after: input.position, limit: input.limit, columns });
    const last = page.rows[page.rows.length - 1];
    const first = page.rows[0];
    return {
      ...(input.traced &&
        first &&
        last && { appliedIn: readApplyTraces(handle, first.changedUs, last.changedUs, APPLIED_IN_MAX) }),
      items: itemsOf(handle, page, include),
      last: last && { changedUs: last.changedUs, table: last.table, id: last.id },
      hasMore: page.hasMore,
      reached: page.reached,
      state,
    };
  });
}

/** `{"op":"<op>","type":"<type>","id":` of each op and table: the fixed start of an item. */
const ITEM_HEADS = new Map<string, string>(
  [...TABLE_TYPES].flatMap(([table, type]) =>
    (['upsert', 'delete'] as const).map((op) => [`${op}:${table}`, `{"op":"${op}","type":"${type}","id":`]),
  ),
);
const NO_INCLUDE: ReadonlySet<string> = new Set();

/**
 * The JSON text of each change, upserts with their document: the rows read with the keys
 * (readChangesWithRows), each table's through its resource's documents (its includes embedded).
 */
function itemsOf(
  handle: ReadHandle,
  page: ChangesRowsPage,
  include: ReadonlyMap<ResourceName, ReadonlySet<string>>,
): string[] {
  const { rows, records } = page;
  const byTable = new Map<PageTable, Record<string, unknown>[]>();
  for (let index = 0; index < rows.length; index++) {
    const record = records[index];
    if (record === undefined) continue;
    const list = byTable.get(rows[index]!.table);
    if (list) list.push(record);
    else byTable.set(rows[index]!.table, [record]);
  }
  const documents = new Map<PageTable, { texts: string[]; next: number }>();
  for (const [table, list] of byTable) {
    const type = TABLE_TYPES.get(table)!;
    const texts = resourceNamed(type).documents(handle, list, include.get(type) ?? NO_INCLUDE);
    documents.set(table, { texts, next: 0 });
  }
  const items = new Array<string>(rows.length);
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!;
    const head = `${ITEM_HEADS.get(`${row.op}:${row.table}`)}${JSON.stringify(row.id)},"changed_at":"${isoMicros(row.changedUs)}"`;
    if (row.op === 'delete') {
      items[index] = `${head}}`;
      continue;
    }
    const table = documents.get(row.table)!;
    items[index] = `${head},"data":${table.texts[table.next++]}}`;
  }
  return items;
}

/**
 * 410 unless the file can still list every change after the position: the walk's generation, and
 * the tombstones that may matter to it still kept (see the floor above).
 */
function requireCovered(
  walk: { generation: number; floorUs: number } | undefined,
  position: ChangePosition,
  state: SyncState,
): void {
  if (walk === undefined) return;
  if (walk.generation !== state.generation) {
    requireTokenCovered({ generation: walk.generation, watermarkUs: position.changedUs }, state);
  }
  const horizon = state.tombstonesSinceUs;
  if (horizon > position.changedUs + 1 && horizon > walk.floorUs) {
    throw new ApiError(
      'sync_window_expired',
      `Deletions of this company are kept since ${isoMicros(horizon)}; this position is older, so the feed ` +
        'could miss deletions after it. Start the feed again from its beginning (no cursor).',
    );
  }
}
