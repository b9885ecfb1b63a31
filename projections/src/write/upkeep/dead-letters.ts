import type { Change } from '../../model/change.ts';
import type { StatementCache } from '../files/statement-cache.ts';
import type { Rejection } from '../plan/plan.ts';

/**
 * A Kafka message ingest could not decode (ingest/README.md#dead-letters), handed over with its
 * batch. Its value is not part of it: a dead letter says where the message is and why it was
 * refused, and the message itself stays in Kafka (control migration 005).
 */
export interface DeadLetter {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as the decimal string kafkajs gives. */
  readonly offset: string;
  /** The message key (the row's primary key) as received. */
  readonly key: string | null;
  readonly reason: string;
  /** The source table, when the topic names one. */
  readonly table?: string;
}

/** How many dead letters control.sqlite keeps, and how long (ingest: INGEST_DEAD_LETTER_*). */
export interface DeadLetterLimits {
  readonly retentionMs: number;
  readonly maxRows: number;
}

export const DEFAULT_DEAD_LETTER_LIMITS: DeadLetterLimits = {
  retentionMs: 35 * 86_400_000,
  maxRows: 100_000,
};

/**
 * A key is a primary key (a uuid, or two for a grant) and a reason one line; both are cut so a
 * malformed message cannot make a dead letter large.
 */
const MAX_TEXT = 1024;

/**
 * Records dead letters in control.sqlite; `dedupe_key` makes a replayed batch a no-op. Refused
 * changes are stored with their key and op, never their row (the original message stays in Kafka
 * at `offset`). Then, if the table holds more than `maxRows`, as many of the oldest go as were
 * added: a flood of dead letters cannot grow it between two prune passes, which bring it down to
 * the bound in steps (pruneDeadLetters).
 */
export function insertDeadLetters(
  statements: StatementCache,
  letters: readonly DeadLetter[],
  rejections: readonly Rejection[],
  nowMs: number,
  maxRows: number,
): void {
  const insert = statements.get(
    'dead-letter:put',
    () =>
      `INSERT INTO dead_letters (dedupe_key, stage, topic, partition, offset, table_name, message_key,
         op, reason, recorded_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING`,
  );
  let added = 0;
  for (const l of letters) {
    added += insert.run(
      `kafka:${l.topic}/${l.partition}/${l.offset}`,
      'decode',
      l.topic,
      l.partition,
      l.offset,
      l.table ?? null,
      cap(l.key),
      null,
      cap(l.reason),
      nowMs,
    ).changes;
  }
  for (const { change, reason } of rejections) {
    const key = change.kind === 'truncate' ? null : JSON.stringify(change.key);
    const origin = change.origin;
    added += insert.run(
      origin
        ? `kafka:${origin.topic}/${origin.partition}/${origin.offset}`
        : `change:${String(change.table)}/${key ?? ''}/${String(change.position?.lsn)}`,
      'apply',
      origin?.topic ?? null,
      origin?.partition ?? null,
      origin?.offset ?? null,
      String(change.table),
      cap(key),
      opOf(change),
      cap(reason),
      nowMs,
    ).changes;
  }
  if (added > 0) deleteBeyondCap(statements, maxRows, added);
}

/**
 * One bounded step of dead-letter retention, inside the caller's control transaction: deletes at
 * most `maxDelete` letters, the oldest first: those beyond `limits.maxRows`, then those recorded
 * before now − `limits.retentionMs`. Returns how many it deleted (fewer than `maxDelete`: done).
 */
export function pruneDeadLetters(
  statements: StatementCache,
  limits: DeadLetterLimits,
  nowMs: number,
  maxDelete: number,
): number {
  const beyondCap = deleteBeyondCap(statements, limits.maxRows, maxDelete);
  if (beyondCap >= maxDelete) return beyondCap;
  const { changes } = statements
    .get(
      'dead-letter:prune-age',
      () =>
        `DELETE FROM dead_letters WHERE seq IN
           (SELECT seq FROM dead_letters WHERE recorded_at_ms < ? ORDER BY recorded_at_ms, seq LIMIT ?)`,
    )
    .run(nowMs - limits.retentionMs, maxDelete - beyondCap);
  return beyondCap + changes;
}

/** Deletes the oldest letters (arrival order) beyond `maxRows`, at most `maxDelete` of them. */
function deleteBeyondCap(statements: StatementCache, maxRows: number, maxDelete: number): number {
  return statements
    .get(
      'dead-letter:prune-cap',
      () =>
        `DELETE FROM dead_letters WHERE seq IN
           (SELECT seq FROM dead_letters ORDER BY seq
            LIMIT max(0, min(?, (SELECT count(*) FROM dead_letters) - ?)))`,
    )
    .run(maxDelete, maxRows).changes;
}

/** The refused change's Debezium op ('t' for a TRUNCATE). */
function opOf(change: Change): string {
  if (change.kind === 'upsert') return change.op;
  return change.kind === 'delete' ? 'd' : 't';
}

function cap(text: string | null): string | null {
  return text !== null && text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}
