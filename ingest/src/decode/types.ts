import type { Change } from '@pda/projections/model';

/**
 * A Kafka record as the decoder sees it (from the consumer or from a replay file). key/value are
 * the raw bytes or text; null value = tombstone.
 */
export interface RawRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Uint8Array | string | null;
  readonly value: Uint8Array | string | null;
  /** The record's Kafka timestamp (epoch ms; the producer's create time), when the client gives it. */
  readonly timestampMs?: number;
}

export type DecodeResult =
  | { readonly type: 'change'; readonly change: Change }
  | { readonly type: 'ignored'; readonly reason: IgnoredReason }
  | { readonly type: 'dead-letter'; readonly reason: string };

/** Deliberately ignored messages (counted in metrics, never applied). */
export type IgnoredReason =
  | 'tombstone' // null value right after its `d` (which did the work), or no known position (partition-positions.ts)
  | 'heartbeat' // __debezium-heartbeat.<prefix>
  | 'transaction' // <prefix>.transaction BEGIN/END markers
  | 'uncaptured-table' // a topic of a table this read side does not project
  | 'message'; // op 'm' (pg_logical_emit_message)
