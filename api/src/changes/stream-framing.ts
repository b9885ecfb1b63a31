import type { ProblemDocument } from '../errors/problem.ts';
import { joinedBytes } from '../http/page-bytes.ts';

/**
 * The lines of a streamed change feed (docs/public-data-api-v1.md, "Change feed as a stream"), in
 * the two media types a partner may ask for. Every line is one JSON object with an `op`: the feed's
 * items as its pages have them (`upsert`, `delete`), and three of the stream's own:
 *
 *   {"op":"position","links":{"next":"<url>"},"caught_up":false}  after every chunk: store it
 *   {"op":"heartbeat"}                                            a live stream with nothing new
 *   {"op":"error","error":<problem document>}                    the last line of a stream that cannot go on
 *
 * NDJSON (`application/x-ndjson`) writes each as a line. Server-Sent Events (`text/event-stream`)
 * sends an item as a `message` event, the others as events named `position`, `heartbeat` and
 * `problem` (not `error`: EventSource uses that name for its own connection errors); a position's
 * `id:` is its cursor, so an EventSource that reconnects sends it back as `Last-Event-ID`.
 *
 * The item texts are JSON from JSON.stringify and the stored documents: they hold no line break.
 */
export type StreamMedia = 'ndjson' | 'sse';

export const STREAM_CONTENT_TYPES: Record<StreamMedia, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  sse: 'text/event-stream; charset=utf-8',
};

export interface StreamPosition {
  readonly cursor: string;
  readonly next: string;
  readonly caughtUp: boolean;
}

export interface Framing {
  /** A chunk: its items, then the position after them. */
  chunk(items: readonly string[], position: StreamPosition): Buffer;
  heartbeat(): Buffer;
  error(problem: ProblemDocument): Buffer;
}

const positionJson = (p: StreamPosition) =>
  `{"op":"position","links":{"next":${JSON.stringify(p.next)}},"caught_up":${p.caughtUp}}`;
const HEARTBEAT = '{"op":"heartbeat"}';
const errorJson = (problem: ProblemDocument) => `{"op":"error","error":${JSON.stringify(problem)}}`;

const ndjson: Framing = {
  chunk: (items, position) => joined('', items, '\n', `\n${positionJson(position)}\n`),
  heartbeat: () => Buffer.from(`${HEARTBEAT}\n`),
  error: (problem) => Buffer.from(`${errorJson(problem)}\n`),
};

const sse: Framing = {
  chunk: (items, position) =>
    joined(
      'data: ',
      items,
      '\n\ndata: ',
      `\n\nevent: position\nid: ${position.cursor}\ndata: ${positionJson(position)}\n\n`,
    ),
  heartbeat: () => Buffer.from(`event: heartbeat\ndata: ${HEARTBEAT}\n\n`),
  error: (problem) => Buffer.from(`event: problem\ndata: ${errorJson(problem)}\n\n`),
};

export const FRAMINGS: Record<StreamMedia, Framing> = { ndjson, sse };

/** A chunk's bytes (http/page-bytes.ts); no items: the tail alone, without its leading breaks. */
function joined(head: string, items: readonly string[], separator: string, tail: string): Buffer {
  if (items.length === 0) return Buffer.from(tail.replace(/^\n+/, ''));
  return joinedBytes(head, items, separator, tail);
}
