import type { components, paths } from '@pda/api/contract-types';
import type { Resource } from './contract.ts';
import type { CallOptions, QueryParams, Transport } from './transport.ts';

/** The query of `GET /v1/changes` (`filter[type]`, `sync`, `cursor`, `limit`, `wait`, `include[…]`). */
export type ChangesQuery = NonNullable<paths['/v1/changes']['get']['parameters']['query']>;
/** One page of the change feed: `{ data, meta, links }`, `links.next` never null. */
export type ChangesPage = paths['/v1/changes']['get']['responses'][200]['content']['application/json'];
/** One change: `{ op: 'upsert', type, id, changed_at, data }` or `{ op: 'delete', type, id, changed_at }`. */
export type Change = components['schemas']['Change'];

export interface FollowOptions {
  /**
   * Where to continue: the `position` of a page this feed yielded before (stored with the copy it
   * was applied to). Absent: from `sync`, or else from the start (every record, then every change).
   */
  readonly from?: string;
  /** A collection's or the deletions feed's sync token (`meta.sync.token`): start after that walk. */
  readonly sync?: string;
  /** The types to follow (default: every type the key may read). Not with `from` or `sync`. */
  readonly types?: readonly Resource[];
  /** Relations embedded in upserts: `{ sites: 'contacts', equipment: 'category' }`. */
  readonly include?: { readonly sites?: 'contacts'; readonly equipment?: 'category' };
  /** Page size (default 200). */
  readonly limit?: number;
  /** Seconds each request may be held while the feed is caught up (1 to 30, default 20). */
  readonly wait?: number;
  /** Return once caught up (the first page with nothing more) instead of following for ever. */
  readonly untilCaughtUp?: boolean;
  readonly signal?: AbortSignal;
}

/** What `follow` yields: one page of changes and where the feed continues after it. */
export interface FollowPage {
  /** Apply these in order. Empty when the feed is caught up and nothing committed during the wait. */
  readonly changes: readonly Change[];
  /** Store it once `changes` are applied; `follow({ from: position })` continues right after them. */
  readonly position: string;
  /** Nothing more right now (`meta.page.has_more` false). */
  readonly caughtUp: boolean;
}

/**
 * Follows `GET /v1/changes` (docs/partners.md, "Follow the feed"): pages along `links.next`, and
 * once caught up asks each next page with `wait`, so a change arrives within moments of its commit
 * without polling. Every yielded page carries its position: a follower that stops anywhere (a crash
 * included) continues with `follow({ from: position })` from the last page it applied, and gets
 * nothing twice that it had applied and nothing missed. `410 sync_window_expired`
 * (`SyncWindowExpiredError`: the position is older than the deletions kept, or the company's data
 * was rebuilt) is thrown: start again from an empty copy without `from`.
 */
export async function* follow(
  http: Transport,
  options: FollowOptions = {},
): AsyncGenerator<FollowPage, void, undefined> {
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  const wait = Math.min(30, Math.max(1, Math.round(options.wait ?? 20)));
  let url = options.from ?? http.url('/v1/changes', firstQuery(options));
  let caughtUp = false;
  for (;;) {
    const target = withWait(url, caughtUp && !options.untilCaughtUp ? wait : undefined);
    const page = await http.getJson<ChangesPage>(target, call);
    caughtUp = !page.meta.page.has_more;
    url = page.links.next;
    yield { changes: page.data, position: url, caughtUp };
    if (caughtUp && options.untilCaughtUp) return;
  }
}

function firstQuery(options: FollowOptions): QueryParams {
  return {
    'filter[type]': options.sync === undefined && options.types ? options.types.join(',') : undefined,
    sync: options.sync,
    limit: options.limit ?? 200,
    'include[sites]': options.include?.sites,
    'include[equipment]': options.include?.equipment,
  };
}

/**
 * The link with `wait` set (or removed): the one parameter a follower changes between pages. Set,
 * never appended: the link of a page asked with `wait` carries it already, and the api refuses a
 * parameter given twice.
 */
function withWait(url: string, wait: number | undefined): string {
  const target = new URL(url);
  if (wait === undefined) target.searchParams.delete('wait');
  else target.searchParams.set('wait', String(wait));
  return target.href;
}
