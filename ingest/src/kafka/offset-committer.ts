/**
 * Offsets committed to Kafka only up to where every SQLite transaction of a partition's chunks
 * committed (in-flight.ts), and only after the durability barrier: at-least-once delivery +
 * idempotent apply = exactly once in effect.
 */
import type { Logger } from 'pino';
import type { GroupConsumer } from './client.ts';
import type { CommitOffset, InFlightChunks } from './in-flight.ts';

/** The part of the source's options (source.ts KafkaSourceOptions) the committer reads. */
export interface CommitOptions {
  /** Resolves once what SQLite committed so far is on disk (batch/durability.ts). */
  readonly durable?: () => Promise<void>;
  readonly logger: Logger;
}

/** When a commit round ran (epoch ms): the durability barrier, then Kafka's commit (traces). */
export interface CommitRound {
  readonly durableStartMs: number;
  readonly durableEndMs: number;
  readonly committedAtMs: number;
}

const epochNow = () => performance.timeOrigin + performance.now();

/** Chunks waiting to hear that their offsets are committed, at most (the oldest told first, unanswered). */
const MAX_WAITING = 10_000;

interface Waiting {
  readonly topic: string;
  readonly partition: number;
  /** The chunk's last offset: committed once Kafka's committed offset (the next to read) is past it. */
  readonly last: bigint;
  readonly done: (round: CommitRound | undefined) => void;
}

/**
 * Commits what is applied: one commit loop at a time, repeated while more became applied, each
 * round after the durability barrier.
 */
export function createOffsetCommitter(
  consumer: GroupConsumer,
  inFlight: InFlightChunks,
  options: CommitOptions,
) {
  let committing: Promise<void> | undefined;
  const waiting: Waiting[] = [];

  /** Tells the chunks whose offsets `offsets` covers, with the round that committed them. */
  function answer(offsets: readonly CommitOffset[], round: CommitRound): void {
    for (let i = waiting.length - 1; i >= 0; i--) {
      const w = waiting[i] as Waiting;
      const next = offsets.find((o) => o.topic === w.topic && o.partition === w.partition)?.offset;
      if (next !== undefined && BigInt(next) > w.last) {
        waiting.splice(i, 1);
        w.done(round);
      }
    }
  }

  /** The returned promise settles when the loop is done (the drain awaits it for the final commit). */
  function commitApplied(): Promise<void> {
    if (committing) return committing;
    const loop = (async () => {
      // Settle strictly after `committing` is assigned, even when there is nothing to commit.
      await null;
      try {
        for (let offsets = inFlight.commitable(); offsets.length > 0; offsets = inFlight.commitable()) {
          const durableStartMs = epochNow();
          await options.durable?.();
          const durableEndMs = epochNow();
          await consumer.commit(offsets);
          inFlight.committed(offsets);
          if (waiting.length > 0)
            answer(offsets, { durableStartMs, durableEndMs, committedAtMs: epochNow() });
        }
        return true;
      } catch (error) {
        // Not lost: the next applied chunk (or the drain at stop) commits again; at worst a restart
        // replays applied records, which the version guards skip.
        options.logger.warn({ err: String(error) }, 'offset commit failed');
        return false;
      }
    })();
    committing = loop.then((ok) => {
      committing = undefined;
      // Applied while the loop was finishing: commit it now rather than with the next chunk.
      if (ok && inFlight.commitable().length > 0) return commitApplied();
    });
    return committing;
  }

  /**
   * Calls `done` with the round that commits a chunk's offsets (its batch's trace ends there). A
   * chunk whose partition moved to another member before that is never answered: beyond
   * MAX_WAITING the oldest are told `undefined`, so nothing waits without bound.
   */
  function whenCommitted(
    topic: string,
    partition: number,
    last: string,
    done: (round: CommitRound | undefined) => void,
  ): void {
    waiting.push({ topic, partition, last: BigInt(last), done });
    if (waiting.length > MAX_WAITING) waiting.shift()?.done(undefined);
  }

  return { commitApplied, whenCommitted };
}
export type OffsetCommitter = ReturnType<typeof createOffsetCommitter>;
