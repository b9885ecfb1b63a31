import type { components } from '@pda/api/contract-types';
import type { Resource } from './contract.ts';
import { ApiError, apiError, StreamNotOfferedError } from './errors.ts';
import type { Change, FollowOptions, FollowPage } from './follow.ts';
import { ndjsonLines } from './ndjson-lines.ts';
import { isRetriableStatus } from './retry.ts';
import type { CallOptions, QueryParams, Transport } from './transport.ts';

/** A line of a streamed feed that is not a change: a position, a heartbeat, or the error that ended it. */
export type StreamLine = components['schemas']['StreamLine'];

export interface StreamOptions {
  /**
   * Where to continue: a `position` this stream or `follow` yielded before (stored with the copy
   * it was applied to). Absent: from `sync`, or else from the start (every record, then every change).
   */
  readonly from?: string;
  /** A collection's or the deletions feed's sync token (`meta.sync.token`): start after that walk. */
  readonly sync?: string;
  /** The types to stream (default: every type the key may read). Not with `from` or `sync`. */
  readonly types?: readonly Resource[];
  /** Relations embedded in upserts: `{ sites: 'contacts', equipment: 'category' }`. */
  readonly include?: FollowOptions['include'];
  /**
   * Stay connected once caught up: each commit's changes as they land; when the api ends the
   * stream at its lifetime, reconnect from its last position, for ever (until `signal` aborts or
   * the caller stops iterating).
   */
  readonly live?: boolean;
  readonly signal?: AbortSignal;
}

/** What `stream` yields per chunk: the shape `follow` yields per page, so one consumer takes both. */
export type StreamChunk = FollowPage;

const NDJSON = 'application/x-ndjson';

/**
 * Reads `GET /v1/changes` as one NDJSON stream (docs/partners.md, "Export in one request" and
 * "Stay connected"): the api sends the walk in chunks of at most 200 changes, each followed by a
 * position line; each chunk is yielded once its position has come, so every yielded position
 * resumes right after the changes yielded with it. Without `live` it ends at the position that
 * says caught up.
 *
 * A connection cut mid-stream (a network error, a body that ends early, an error line the api
 * may send again differently: 429 or 5xx) is resumed from the last position yielded, after the
 * client's retry backoff (`retry`, `onRetry`; attempts counted until a chunk comes through): the
 * caller sees no change missed and none twice, while the api sends again at most the chunk that
 * was cut. `410 sync_window_expired` (an answer, or the stream's last line after a rebuild)
 * throws `SyncWindowExpiredError`: start again from an empty copy without `from`; an api that
 * answers with pages throws `StreamNotOfferedError` (use `follow`).
 */
export async function* stream(
  http: Transport,
  options: StreamOptions = {},
): AsyncGenerator<StreamChunk, void, undefined> {
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  const live = options.live === true;
  let position = options.from;
  const start = http.url('/v1/changes', firstQuery(options));
  /** Connections in a row that failed before a chunk came through. */
  let failures = 0;
  for (;;) {
    const target = streamUrl(position ?? start, live);
    const response = await http.openStream(target, NDJSON, call);
    const contentType = response.headers.get('content-type');
    if (response.body === null || !contentType?.toLowerCase().startsWith(NDJSON)) {
      await response.body?.cancel();
      throw new StreamNotOfferedError(target, contentType);
    }
    let positions = 0;
    let failure: unknown;
    try {
      let changes: Change[] = [];
      for await (const parsed of ndjsonLines(response.body)) {
        const line = parsed as Change | StreamLine;
        if (line.op === 'upsert' || line.op === 'delete') changes.push(line);
        else if (line.op === 'position' && line.links !== undefined) {
          position = line.links.next;
          positions += 1;
          failures = 0;
          const caughtUp = line.caught_up === true;
          yield { changes, position, caughtUp };
          changes = [];
          if (caughtUp && !live) return;
        } else if (line.op === 'error' && line.error !== undefined) {
          const error = apiError(line.error.status, line.error, target, line.error.request_id);
          if (!isRetriableStatus(error.status)) throw error;
          failure = error;
          break;
        }
        // A heartbeat says the connection is alive; a line of another op is one this client does not know.
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof ApiError) throw error;
      failure = error;
    }
    // A live stream that ended after a position reached its lifetime: reconnect from it at once.
    if (failure === undefined && live && positions > 0) continue;
    failures += 1;
    await http.backoff(
      failures,
      target,
      failure ?? new Error(`${target}: the stream ended before it caught up`),
      call,
    );
  }
}

function firstQuery(options: StreamOptions): QueryParams {
  return {
    'filter[type]': options.sync === undefined && options.types ? options.types.join(',') : undefined,
    sync: options.sync,
    'include[sites]': options.include?.sites,
    'include[equipment]': options.include?.equipment,
  };
}

/**
 * A position as a stream's URL: `live` set or removed, and no `wait` (a page's `links.next` may
 * carry it, and a stream with `wait` is a 400: a stream stays open with `live` instead).
 */
function streamUrl(position: string, live: boolean): string {
  const target = new URL(position);
  target.searchParams.delete('wait');
  if (live) target.searchParams.set('live', 'true');
  else target.searchParams.delete('live');
  return target.href;
}
