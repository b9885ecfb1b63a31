import type { Client } from './client.ts';
import type { ListQuery, OmitEach, Resource, ResourceRecord } from './contract.ts';
import { ApiError, StreamNotOfferedError, SyncWindowExpiredError } from './errors.ts';
import { walk } from './pages.ts';
import { isRetriableStatus } from './retry.ts';
import type { StreamChunk, StreamOptions } from './stream.ts';

export interface ExportOptions<R extends Resource> {
  /**
   * `include`, `fields[…]`, `sort`, `limit` (200 unless given: fewer requests of the key's budget).
   * Anything but `include` asks for pages: a page size, fields or an order the feed does not have.
   */
  readonly query?: OmitEach<ListQuery<R>, 'cursor'>;
  readonly signal?: AbortSignal;
}

/**
 * A full export: every record of `resource`. Where the api offers it (its answer to the stream's
 * request is a `200` of `application/x-ndjson`), in one request: the change feed of that type
 * streamed from the start, its upserts yielded chunk by chunk, its deletes skipped (a walk from
 * the start lists a record deleted during it as a delete only, never yielded). Otherwise, and
 * whenever the query asks for more than `include` (`limit`: a page size; `fields[…]`, `sort`, a
 * filter: what the feed does not give), page after page along `links.next`, as before.
 *
 * What differs from the paged export: records come in change order, not by id, and a record
 * changed during the export may be yielded again, newer, later in the same export (the stream
 * walks changes until caught up, where the pages list each record once as it was when its page
 * was read). Keep the last one by id. A record deleted after it was yielded is not taken back by
 * either: follow the feed (or sync) from the export for that.
 */
export async function* exportAll<R extends Resource>(
  // Without `stream` (syncSince's filtered walk, which the feed cannot give): pages only.
  client: Pick<Client, 'list' | 'next'> & Partial<Pick<Client, 'stream'>>,
  resource: R,
  options: ExportOptions<R> = {},
): AsyncGenerator<ResourceRecord<R>> {
  const call = options.signal ? { signal: options.signal } : {};
  const streamed = streamOptions(resource, options);
  if (streamed !== undefined && client.stream !== undefined) {
    const chunks = client.stream(streamed);
    let first: IteratorResult<StreamChunk, void> | undefined;
    try {
      first = await chunks.next();
    } catch (error) {
      if (!noStreamHere(error)) throw error;
    }
    if (first !== undefined) {
      yield* upserts(resource, chunks, first);
      return;
    }
  }
  // A spread of a generic query is not provably the same generic type: the cast only restores it.
  const query = { limit: 200, ...options.query } as ListQuery<R>;
  for await (const page of walk(client, await client.list(resource, query, call), call)) {
    yield* page.data;
  }
}

/** The stream of the resource's type, or undefined when the query asks for pages (ExportOptions.query). */
function streamOptions<R extends Resource>(
  resource: R,
  options: ExportOptions<R>,
): StreamOptions | undefined {
  const { include, ...rest } = (options.query ?? {}) as { include?: string };
  if (Object.values(rest).some((value) => value !== undefined)) return undefined;
  const signal = options.signal ? { signal: options.signal } : {};
  if (include === undefined) return { types: [resource], ...signal };
  if (resource === 'sites' && include === 'contacts')
    return { types: [resource], include: { sites: 'contacts' }, ...signal };
  if (resource === 'equipment' && include === 'category')
    return { types: [resource], include: { equipment: 'category' }, ...signal };
  return undefined;
}

/** The api answered the stream's request with pages, or refused it as it would not refuse a page. */
function noStreamHere(error: unknown): boolean {
  if (error instanceof StreamNotOfferedError) return true;
  return (
    error instanceof ApiError &&
    !isRetriableStatus(error.status) &&
    !(error instanceof SyncWindowExpiredError)
  );
}

async function* upserts<R extends Resource>(
  resource: R,
  chunks: AsyncGenerator<StreamChunk, void, undefined>,
  first: IteratorResult<StreamChunk, void>,
): AsyncGenerator<ResourceRecord<R>> {
  try {
    for (let at = first; at.done !== true; at = await chunks.next()) {
      for (const change of at.value.changes) {
        // The feed's upserts of this type carry the record as its item endpoint serves it.
        if (change.op === 'upsert' && change.type === resource) yield change.data as ResourceRecord<R>;
      }
    }
  } finally {
    await chunks.return(undefined);
  }
}
