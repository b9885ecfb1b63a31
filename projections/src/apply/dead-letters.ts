import type { Change } from '../change.ts';
import type { Rejection } from './plan.ts';
import type { StatementCache } from './statement-cache.ts';

/** A Kafka message ingest could not decode (ingest/README.md#dead-letters), handed over with its batch. */
export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as the decimal string kafkajs gives. */
  readonly offset: string;
  readonly key: string | null;
  readonly value: string | null;
  readonly reason: string;
  /** The source table, when the topic names one. */
  readonly table?: string;
}

/** Stored key/value are capped: a dead letter is for diagnosis, not a second copy of the topic. */
const MAX_TEXT = 64 * 1024;

/**
 * Records dead letters in control.sqlite; `dedupe_key` makes a replayed batch a no-op. Refused
 * changes are stored with their decoded form (the original bytes stay in Kafka at `offset`).
 */
export function insertDeadLetters(
  statements: StatementCache,
  letters: readonly DeadLetter[],
  rejections: readonly Rejection[],
  nowMs: number,
): void {
  const insert = statements.get(
    'dead-letter:put',
    () =>
      `INSERT INTO dead_letters (dedupe_key, stage, topic, partition, offset, table_name, message_key,
         message_value, reason, recorded_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING`,
  );
  for (const l of letters) {
    insert.run(
      `kafka:${l.topic}/${l.partition}/${l.offset}`,
      'decode',
      l.topic,
      l.partition,
      l.offset,
      l.table ?? null,
      cap(l.key),
      cap(l.value),
      cap(l.reason),
      nowMs,
    );
  }
  for (const { change, reason } of rejections) {
    const key = change.kind === 'truncate' ? null : JSON.stringify(change.key);
    const origin = change.origin;
    insert.run(
      origin
        ? `kafka:${origin.topic}/${origin.partition}/${origin.offset}`
        : `change:${String(change.table)}/${key ?? ''}/${String(change.position?.lsn)}`,
      'apply',
      origin?.topic ?? null,
      origin?.partition ?? null,
      origin?.offset ?? null,
      String(change.table),
      cap(key),
      cap(describe(change)),
      cap(reason),
      nowMs,
    );
  }
}

function describe(change: Change): string {
  return JSON.stringify(
    change.kind === 'upsert' ? { row: change.row, unavailable: change.unavailable } : change,
  );
}

function cap(text: string | null): string | null {
  return text !== null && text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}
