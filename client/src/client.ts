import type {
  DeletionsPage,
  DeletionsQuery,
  ItemDocument,
  ItemQuery,
  ListPage,
  ListQuery,
  MeDocument,
  Page,
  Resource,
  ResourceRecord,
} from './contract.ts';
import { type ExportOptions, exportAll } from './export-all.ts';
import { type FollowOptions, type FollowPage, follow } from './follow.ts';
import { type StreamChunk, type StreamOptions, stream } from './stream.ts';
import { type SyncFromOptions, type SyncTokens, syncFrom, type TokenSyncItem } from './sync-from.ts';
import { type SyncItem, type SyncOptions, syncSince } from './sync-since.ts';
import { type CallOptions, type ClientOptions, createTransport, type QueryParams } from './transport.ts';

/**
 * A client of the Public Data API v1 (docs/partners.md). Every method is a GET: 429, 5xx and
 * network errors are retried (ClientOptions.retry), other error answers throw `ApiError`.
 */
export interface Client {
  /** One page of a collection. Follow `links.next` with `next(page)`, or use `exportAll`. */
  list<R extends Resource>(resource: R, query?: ListQuery<R>, options?: CallOptions): Promise<ListPage<R>>;
  /** One record (`404 not_found` for an id of another company, exactly as for an unknown one). */
  get<R extends Resource>(
    resource: R,
    id: string,
    query?: ItemQuery<R>,
    options?: CallOptions,
  ): Promise<ItemDocument<R>>;
  /** One page of `GET /v1/deletions` (`filter[deleted_since]`, `sync`, or neither: every deletion kept). */
  deletions(query: DeletionsQuery, options?: CallOptions): Promise<DeletionsPage>;
  /**
   * Follows the change feed `GET /v1/changes` (follow.ts): every change of the company's records in
   * commit order, page by page, held with `wait` once caught up; each page's `position` resumes it.
   */
  follow(options?: FollowOptions): AsyncGenerator<FollowPage, void, undefined>;
  /**
   * The same feed in one request (stream.ts): `{ changes, position, caughtUp }` per chunk of the
   * NDJSON stream, until caught up, or with `live` for ever (reconnecting at each stream's
   * lifetime); a cut connection is resumed from the last position yielded.
   */
  stream(options?: StreamOptions): AsyncGenerator<StreamChunk, void, undefined>;
  /** The calling key (`revokes_at` tells a rotation is under way) and the selected company. */
  me(options?: CallOptions): Promise<MeDocument>;
  /** The page `links.next` points at, as given (never rebuilt), or null after the last page. */
  next<P extends Page>(page: P, options?: CallOptions): Promise<P | null>;
  /**
   * Every record of a resource (export-all.ts): in one stream of the change feed where the api
   * offers it, else the first page, then `links.next` until it is null.
   */
  exportAll<R extends Resource>(resource: R, options?: ExportOptions<R>): AsyncGenerator<ResourceRecord<R>>;
  /**
   * One run of the token procedure (sync-from.ts): with `from` null a full export, otherwise
   * exactly what changed since the run that handed out `from`; the last item is the checkpoint
   * holding the tokens of the next run.
   */
  syncFrom<R extends Resource>(
    resource: R,
    from: SyncTokens | null,
    options?: SyncFromOptions<R>,
  ): AsyncGenerator<TokenSyncItem<R>>;
  /**
   * What changed since `since` (the start time of the last successful run): the deletions of the
   * resource, then its records updated since then; apply them in the order given. The fallback
   * of `syncFrom` for partners who keep times (a 60 s overlap comes again each run).
   */
  syncSince<R extends Resource>(
    resource: R,
    since: Date | string,
    options?: SyncOptions<R>,
  ): AsyncGenerator<SyncItem<R>>;
}

export function createClient(options: ClientOptions): Client {
  const http = createTransport(options);
  const client: Client = {
    list: (resource, query, call) => http.getJson(http.url(`/v1/${resource}`, queryParams(query)), call),
    get: (resource, id, query, call) =>
      http.getJson(http.url(`/v1/${resource}/${encodeURIComponent(id)}`, queryParams(query)), call),
    deletions: (query, call) => http.getJson(http.url('/v1/deletions', query), call),
    me: (call) => http.getJson(http.url('/v1/me'), call),
    follow: (followOptions) => follow(http, followOptions),
    stream: (streamOptions) => stream(http, streamOptions),
    next: async (page, call) => (page.links.next === null ? null : http.getJson(page.links.next, call)),
    exportAll: (resource, exportOptions) => exportAll(client, resource, exportOptions),
    syncFrom: (resource, from, syncOptions) => syncFrom(client, resource, from, syncOptions),
    syncSince: (resource, since, syncOptions) => syncSince(client, resource, since, syncOptions),
  };
  return client;
}

/** A contract query as sent (every generated query type is a record of strings and numbers). */
function queryParams(query: object | undefined): QueryParams {
  return Object.fromEntries(
    Object.entries(query ?? {}).filter(
      (entry): entry is [string, string | number] =>
        typeof entry[1] === 'string' || typeof entry[1] === 'number',
    ),
  );
}
