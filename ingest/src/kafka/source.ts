/**
 * The Kafka side of the worker: a consumer group over the captured tables' topics, through the
 * client seam (client.ts; kafkajs underneath). Each fetched batch is handed to the apply side in
 * chunks without waiting for them, so the client fetches on while they are applied, and a
 * partition's offsets are committed to Kafka only up to where every SQLite transaction of its
 * chunks committed (in-flight.ts): at-least-once delivery + idempotent apply = exactly once in
 * effect.
 *
 * One file per mechanism, each reading only its part of KafkaSourceOptions: hand-over.ts (a batch
 * → chunks, with backpressure), offset-committer.ts (applied → committed, after the durability
 * barrier), failure-pause.ts (a failed chunk: pause, seek back, resume after a backoff),
 * heartbeat-watch.ts (Debezium's heartbeats → "the source is current"), membership.ts (connected
 * state, the member file, leaving a crashed consumer's membership) and prepare-topics.ts. `run`
 * here wires them for one consumer and drains at the end.
 */
import type { Logger } from 'pino';
import { authenticationError } from './auth-failure.ts';
import { createKafkaClient, type KafkaClient } from './client.ts';
import { createFailurePause, type FailureOptions } from './failure-pause.ts';
import { type HandOverOptions, handOverBatches, type RecordsHandler } from './hand-over.ts';
import { createHeartbeatWatch, type HeartbeatOptions } from './heartbeat-watch.ts';
import { InFlightChunks } from './in-flight.ts';
import { LagMonitor, type LagSnapshot } from './lag-monitor.ts';
import { type MembershipOptions, trackMembership } from './membership.ts';
import { type CommitOptions, createOffsetCommitter } from './offset-committer.ts';
import { removeDeadPredecessor } from './predecessor.ts';
import { prepareTopics, type TopicOptions } from './prepare-topics.ts';
import type { KafkaConnection } from './security.ts';
import { ownsPartition, type WriterOwnership, writerAssignment } from './writer-ownership.ts';

export interface KafkaSourceOptions
  extends HandOverOptions,
    CommitOptions,
    FailureOptions,
    HeartbeatOptions,
    MembershipOptions,
    TopicOptions {
  readonly brokers: readonly string[];
  /** TLS and SASL (security.ts kafkaConnectionOptions); omitted: plaintext, no authentication. */
  readonly security?: KafkaConnection;
  readonly clientId: string;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  readonly maxBatchEvents: number;
  readonly fetchMaxBytes: number;
  readonly sessionTimeoutMs: number;
  /** 1 with a synchronous apply; more with the apply thread. */
  readonly partitionsInFlight: number;
  /**
   * Events handed to `commit` and not yet committed, over all partitions (backpressure bound); a
   * function is read before each chunk (the bound follows the apply side, batch/group-bound.ts).
   */
  readonly maxEventsInFlight: number | (() => number);
  /** Fail instead of warn when a data topic is not compacted and lost its oldest events (rebuild). */
  readonly refuseTruncatedTopics?: boolean;
  /**
   * Debezium's heartbeat topic, consumed with the data topics. A heartbeat's time is reported to
   * `onSourceCurrent` once a lag poll that started after it arrived finds every data partition
   * applied to its end: every change Debezium sent before the heartbeat is then applied.
   */
  readonly heartbeatTopic?: string;
  readonly onSourceCurrent?: (tsMs: number) => Promise<void>;
  /** A heartbeat's time from its value (JSON or Avro); default heartbeatTsMs, JSON only. */
  readonly readHeartbeat?: (value: Uint8Array | null) => number | undefined;
  /**
   * Where this worker records its group membership, so that the next worker on the same data
   * directory can remove it from the group at once after a crash (predecessor.ts).
   */
  readonly memberFile?: string;
  readonly logger: Logger;
  /**
   * Resolves once what SQLite committed so far is on disk (batch/durability.ts); offsets are
   * committed only after it. Omitted: offsets follow the SQLite commits directly.
   */
  readonly durable?: () => Promise<void>;
  /**
   * Told of every failed apply before the partition pauses: `logged` = the caller reported it (a
   * storage fault is logged once per fault, not per partition and retry); `retryMs` replaces the
   * exponential backoff (a full disk is retried every few seconds so applying resumes soon after).
   */
  readonly onApplyFailure?: (error: unknown) => { logged: boolean; retryMs?: number };
  /** The Kafka client; default createKafkaClient (kafkajs) with the settings above. */
  readonly client?: KafkaClient;
  /**
   * A writer of a split deployment (kafka/writer-ownership.ts): its one-member group takes exactly its
   * partitions of the tenant topics and all of the others, lag counts only those, and the tenant
   * topics must have the file's partitions. Omitted: every partition, the group's usual assignor.
   */
  readonly ownership?: { readonly writer: WriterOwnership; readonly topicPrefix: string };
}

export interface KafkaSource {
  /** Consumes until `signal` aborts, then waits for every handed-over chunk, commits and disconnects. */
  run<T>(handler: RecordsHandler<T>, signal: AbortSignal): Promise<void>;
  lag(): LagSnapshot;
  connected(): boolean;
}

export function createKafkaSource(options: KafkaSourceOptions): KafkaSource {
  const { logger } = options;
  const client =
    options.client ??
    createKafkaClient({
      clientId: options.clientId,
      brokers: options.brokers,
      ...(options.security ? { security: options.security } : {}),
      logger,
    });
  const owned = options.ownership;
  const lag = new LagMonitor(
    client.admin,
    options.groupId,
    options.topics,
    ownsPartition(owned?.writer, owned?.topicPrefix ?? ''),
  );
  const inFlight = new InFlightChunks();
  const subscribed = options.heartbeatTopic
    ? [...options.topics, options.heartbeatTopic]
    : [...options.topics];
  const assignment = owned && writerAssignment(owned.writer, owned.topicPrefix, subscribed);
  const heartbeats = createHeartbeatWatch(options, lag, inFlight);
  const state = { connected: false };

  /** Refused credentials: one line naming who was refused and what to check (auth-failure.ts). */
  const refused = (error: unknown) =>
    client.isAuthenticationFailure(error)
      ? authenticationError(error, options.security?.sasl, options.brokers)
      : error;

  return {
    lag: () => lag.snapshot(),
    connected: () => state.connected,
    async run(handler, signal) {
      const membership = trackMembership(client, options, state, signal);
      const consumer = client.consumer(
        {
          groupId: options.groupId,
          topics: subscribed,
          fromBeginning: options.fromBeginning,
          sessionTimeoutMs: options.sessionTimeoutMs,
          fetchMaxBytes: options.fetchMaxBytes,
          // Several partitions in flight: the main thread decodes one while the apply thread (the
          // one writer, strictly in arrival order) applies others. Order within a partition is kept.
          partitionsInFlight: options.partitionsInFlight,
          ...(assignment && { assignment }),
        },
        membership.events,
      );
      const commits = createOffsetCommitter(consumer, inFlight, options);
      const failures = createFailurePause(consumer, inFlight, options);
      const handOver = handOverBatches({
        options,
        handler,
        signal,
        inFlight,
        heartbeats,
        commits,
        failures,
        lag,
      });

      await client.admin.connect().catch((error: unknown) => {
        throw refused(error);
      });
      const poller = setInterval(() => {
        heartbeats.pollLag().catch((err) => logger.warn({ err: String(err) }, 'lag poll failed'));
      }, 2000);
      try {
        await prepareTopics(client, options, subscribed);
        await heartbeats.pollLag();
        if (options.memberFile)
          await removeDeadPredecessor(client, options.groupId, options.memberFile, logger);
        const stopped = abortedPromise(signal);
        await consumer.start(handOver);
        await Promise.race([stopped, membership.fatal]);
        // Drain: fetch nothing more, let every handed-over chunk commit, then commit its offsets.
        consumer.pause(subscribed.map((topic) => ({ topic })));
        await Promise.race([inFlight.below(1), membership.fatal]);
        await commits.commitApplied();
        // A chunk that committed while the last loop was finishing: one more round.
        if (inFlight.commitable().length > 0) await commits.commitApplied();
      } catch (error) {
        throw refused(error);
      } finally {
        clearInterval(poller);
        failures.clear();
        // Stopping waits for the running batch callbacks and leaves the group. It commits nothing,
        // so what Kafka holds is only what commitApplied() committed after SQLite.
        await consumer.stop().catch((err) => logger.warn({ err: String(err) }, 'consumer disconnect failed'));
        await client.admin.disconnect().catch(() => {});
        state.connected = false;
      }
    },
  };
}

const abortedPromise = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
