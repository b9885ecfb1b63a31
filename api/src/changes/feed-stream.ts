import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { SyncState } from '@pda/projections/read';
import type { ChangesPageRead } from '../read-pool/changes-page-read.ts';
import { type FeedWalk, walkAfter } from './feed-walk.ts';
import type { CommitMark, WaitOutcome } from './held-requests.ts';
import type { Framing, StreamPosition } from './stream-framing.ts';

/**
 * The change feed as a stream (docs/public-data-api-v1.md, "Change feed as a stream"): the walk
 * read chunk after chunk, each chunk its items then a position line, until caught up; `live`
 * then waits for commits and sends each one's changes, with a heartbeat when nothing came for
 * `heartbeatMs`, until `lifetimeMs` have passed, the api closes or the partner goes away, and ends
 * with a position line to reconnect from.
 *
 * Bounded: each chunk is one read of at most `chunkItems` changes in its own read snapshot (no
 * read transaction is held while the socket drains: a slow partner never pins the WAL), and the
 * next is read only when the consumer asks for more (backpressure: stream-response.ts pulls this
 * generator). Between chunks the event loop takes its turn, so other tenants' requests run.
 * A read that fails with a problem a partner can act on (a rebuild: 410 sync_window_expired) ends
 * the stream with an error line; any other failure ends it without one (the connection is cut,
 * and the partner resumes from its last position line). A live stream outlasts a company that is
 * out of service for a while (503: its file being rebuilt): it sends heartbeats and reads again
 * every RETRY_MS, so that a partner learns of a rebuild as its 410, not as a 503 to retry.
 */
const RETRY_MS = 1_000;

export interface FeedStreamParts {
  /** One chunk of the walk after its position (readChangesPage with the stream's chunk size). */
  readonly read: (walk: FeedWalk) => ChangesPageRead;
  /** The cursor and `links.next` URL of a position. */
  readonly position: (walk: FeedWalk, state: SyncState) => { cursor: string; next: string };
  /** Until a commit moves the company's file past `seen`, `ms` pass, the api closes or `signal` aborts. */
  readonly waitForCommit: (seen: CommitMark, ms: number, signal: AbortSignal) => Promise<WaitOutcome>;
  /**
   * A failed read's last line and whether it may pass (a 503), or undefined to end without a
   * line (an error of ours: the connection is cut).
   */
  readonly failure: (error: unknown) => { line: Buffer; retriable: boolean } | undefined;
  readonly framing: Framing;
  readonly live: boolean;
  readonly heartbeatMs: number;
  readonly lifetimeMs: number;
  /** The partner went away (or the api is closing): no more reads. */
  readonly signal: AbortSignal;
  /** The api is closing: end at the next position. */
  readonly closing: () => boolean;
}

export async function* feedStream(start: FeedWalk, parts: FeedStreamParts): AsyncGenerator<Buffer> {
  const { framing, signal } = parts;
  const endsAt = Date.now() + parts.lifetimeMs;
  let walk = start;
  /** A live stream says once that it caught up, even with nothing to send then. */
  let saidCaughtUp = false;
  while (!signal.aborted) {
    let read: ChangesPageRead;
    try {
      read = parts.read(walk);
    } catch (error) {
      const failed = parts.failure(error);
      if (failed === undefined) throw error;
      if (failed.retriable && parts.live && !parts.closing() && Date.now() + RETRY_MS < endsAt) {
        yield framing.heartbeat();
        const waited = await sleep(RETRY_MS, true, { signal }).catch(() => false);
        if (waited) continue;
        return;
      }
      yield failed.line;
      return;
    }
    walk = walkAfter(walk, read);
    const caughtUp = !read.hasMore;
    const at = (): StreamPosition => ({ ...parts.position(walk, read.state), caughtUp });
    if (!caughtUp) {
      yield framing.chunk(read.items, at());
      if (parts.closing()) return;
      await yieldToEventLoop();
      continue;
    }
    if (!parts.live || parts.closing()) {
      yield framing.chunk(read.items, at());
      return;
    }
    if (read.items.length > 0 || !saidCaughtUp) yield framing.chunk(read.items, at());
    saidCaughtUp = true;
    // Caught up and live: wait for a commit, a heartbeat at a time, until the lifetime is over.
    const seen = { generation: read.state.generation, lastChangedUs: read.state.lastChangedUs };
    let outcome: WaitOutcome = 'timeout';
    for (let left = endsAt - Date.now(); left > 0 && !signal.aborted; left = endsAt - Date.now()) {
      outcome = await parts.waitForCommit(seen, Math.min(parts.heartbeatMs, left), signal);
      if (outcome !== 'timeout' || Date.now() >= endsAt) break;
      yield framing.heartbeat();
    }
    if (outcome === 'changed') continue;
    // The lifetime is over or the api is closing: where to reconnect from (nothing new since).
    if (!signal.aborted) yield framing.chunk([], at());
    return;
  }
}
