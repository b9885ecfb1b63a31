import type { Client } from './client.ts';
import type { DeletionsPage, ListPage, ListQuery, OmitEach, Resource } from './contract.ts';
import { walk } from './pages.ts';
import type { SyncItem } from './sync-since.ts';

/**
 * Where the next run of one resource starts: the sync tokens the last pages of this run's two walks
 * handed out (`meta.sync.token`). Opaque; store them with the local copy they describe.
 */
export interface SyncTokens {
  readonly records: string;
  readonly deletions: string;
}

export interface SyncFromOptions<R extends Resource> {
  /** `include`, `fields[…]`, `sort`, `limit` of the records (200 unless given). */
  readonly query?: OmitEach<ListQuery<R>, 'cursor' | 'filter[updated_since]' | 'sync'>;
  readonly signal?: AbortSignal;
}

/** What a token run yields: the changes, then (last) the tokens of the next run. */
export type TokenSyncItem<R extends Resource> =
  | SyncItem<R>
  | { readonly kind: 'checkpoint'; readonly next: SyncTokens };

/**
 * One run of the token procedure (docs/partners.md, "Sync tokens"). With `from` null, a full export
 * (every deletion still kept, then every record: start from an empty copy); otherwise exactly what
 * changed since the run that handed out `from`: the deletions of the resource, then its records,
 * each walk followed along `links.next`. Apply the items in the order given, and store the
 * checkpoint's tokens only once everything before it is applied: a run that stops half-way is
 * simply run again from the same tokens.
 *
 * A 410 (`SyncWindowExpiredError`: the company's data was rebuilt, or the tokens are older than the
 * deletions kept) is thrown by the first request, before anything is yielded, unless a rebuild
 * lands between the two walks: either way, run `syncFrom(resource, null)` into a new copy.
 * No overlap is asked for and no clock is read: a record comes again only when it changed after
 * the previous run's walk began (as already held when that walk brought the new version, or when
 * the change left its representation as it was).
 */
export async function* syncFrom<R extends Resource>(
  client: Pick<Client, 'list' | 'next' | 'deletions'>,
  resource: R,
  from: SyncTokens | null,
  options: SyncFromOptions<R> = {},
): AsyncGenerator<TokenSyncItem<R>> {
  const call = options.signal ? { signal: options.signal } : {};
  const firstDeletions = await client.deletions(
    from === null ? { 'filter[type]': resource, limit: 200 } : { sync: from.deletions, limit: 200 },
    call,
  );
  let lastDeletions: DeletionsPage = firstDeletions;
  for await (const page of walk(client, firstDeletions, call)) {
    lastDeletions = page;
    for (const deletion of page.data) yield { kind: 'deletion', deletion };
  }
  // As in exportAll: the cast restores the generic query type a spread loses.
  const query = {
    limit: 200,
    ...options.query,
    ...(from === null ? {} : { sync: from.records }),
  } as ListQuery<R>;
  let lastRecords: ListPage<R> | undefined;
  for await (const page of walk(client, await client.list(resource, query, call), call)) {
    lastRecords = page;
    yield* page.data.map((record) => ({ kind: 'record' as const, record }));
  }
  yield {
    kind: 'checkpoint',
    next: { records: tokenOf(lastRecords?.meta), deletions: tokenOf(lastDeletions.meta) },
  };
}

function tokenOf(meta: { sync?: { token: string } } | undefined): string {
  const token = meta?.sync?.token;
  if (token === undefined) throw new Error('the last page of a walk carried no sync token (meta.sync)');
  return token;
}
