import { pipeline, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemDocument } from '../errors/problem.ts';
import { toApiError } from '../errors/to-api-error.ts';
import { addVary } from '../http/private-headers.ts';
import { type FeedStreamParts, feedStream } from './feed-stream.ts';
import type { FeedWalk } from './feed-walk.ts';
import type { HeldRequests } from './held-requests.ts';
import { FRAMINGS, STREAM_CONTENT_TYPES, type StreamMedia } from './stream-framing.ts';

/**
 * The media type of a streamed feed the request asks for (Accept), or undefined for pages: the
 * first of `application/x-ndjson` and `text/event-stream` named with a q-value above 0 and not
 * below `application/json`'s.
 */
export function streamMedia(accept: string | undefined): StreamMedia | undefined {
  if (accept === undefined) return undefined;
  let json = 0;
  let best: { media: StreamMedia; q: number } | undefined;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const qParameter = parameters.find((p) => p.startsWith('q='));
    const q = qParameter === undefined ? 1 : Number(qParameter.slice(2));
    if (!(q > 0)) continue;
    if (type === 'application/json') json = Math.max(json, q);
    const media =
      type === 'application/x-ndjson' ? 'ndjson' : type === 'text/event-stream' ? 'sse' : undefined;
    if (media !== undefined && (best === undefined || q > best.q)) best = { media, q };
  }
  return best !== undefined && best.q >= json ? best.media : undefined;
}

/** Bytes the stream reads ahead of the socket: about one chunk; the next is read when drained. */
const READ_AHEAD_BYTES = 64 * 1024;

export type StreamReadParts = Pick<FeedStreamParts, 'read' | 'position' | 'live'>;

/**
 * Sends the feed as a stream: the key's share of streams (429 beyond it: plugins/fair-shares.ts)
 * and a slot of the process's held requests (503 beyond it: held-requests.ts) for as long as it is
 * open; compressed as the request prefers, flushed at every chunk; ended by the partner going away,
 * the api closing (a last position line) or a read failing (an error line when a partner can act
 * on it, such as a rebuild's 410; else the connection is cut and the partner resumes).
 */
export function sendFeedStream(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  parts: { media: StreamMedia; start: FeedWalk; held: HeldRequests; companyId: string } & StreamReadParts,
): FastifyReply {
  const share = app.fairShares.stream(request);
  try {
    parts.held.acquireStream();
  } catch (error) {
    share.release();
    throw error;
  }
  const gone = new AbortController();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    gone.abort();
    parts.held.releaseStream();
    share.release();
  };
  reply.raw.once('close', end);
  const framing = FRAMINGS[parts.media];
  let loggedFailure = false;
  const lines = feedStream(parts.start, {
    read: parts.read,
    position: parts.position,
    live: parts.live,
    framing,
    heartbeatMs: app.config.streams.heartbeatMs,
    lifetimeMs: app.config.streams.lifetimeMs,
    signal: gone.signal,
    closing: () => parts.held.closing,
    waitForCommit: (seen, ms, signal) => parts.held.wait(parts.companyId, seen, ms, signal),
    failure: (error) => {
      // An error of ours (500) cuts the connection: the partner resumes from its last position.
      const { apiError, log } = toApiError(error);
      if (apiError.status === 500) return undefined;
      // Once per stream: a live stream retries a 503 every second while a company is rebuilt.
      if (log !== undefined && !loggedFailure)
        request.log[log]({ err: error }, 'change-feed stream: a read failed');
      loggedFailure = true;
      const line = framing.error(problemDocument(apiError, String(request.id)));
      return { line, retriable: apiError.status === 503 };
    },
  });
  const source = Readable.from(lines, { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
  const failed = (error: Error | null | undefined) => {
    if (error && !gone.signal.aborted)
      request.log.error({ err: error }, 'change-feed stream ended by an error; the connection was cut');
  };
  reply.type(STREAM_CONTENT_TYPES[parts.media]);
  // A proxy (nginx) must pass each chunk on as it comes, not buffer the answer.
  reply.header('x-accel-buffering', 'no');
  addVary(reply, ['Accept', 'Accept-Encoding']);
  const compressed = app.streamEncoder(request);
  if (compressed === undefined) {
    source.once('error', failed);
    return reply.send(source);
  }
  reply.header('content-encoding', compressed.coding);
  return reply.send(pipeline(source, compressed.encoder, failed));
}
