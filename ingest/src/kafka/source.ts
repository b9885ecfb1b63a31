/**
 * The Kafka side of the worker: a consumer group over the captured tables' topics, through the
 * client seam (client.ts; kafkajs underneath). Each fetched batch is handed to the apply side in
 * chunks without waiting for them, so the client fetches on while they are applied, and a
 * partition's offsets are committed to Kafka only up to where every SQLite transaction of its
 * chunks committed (in-flight.ts): at-least-once delivery + idempotent apply = exactly once in
 * effect.
 *
 * The parts, one job each: `handOver` (a batch → chunks, with backpressure), `createOffsetCommitter`
 * (applied → committed, after the durability barrier), `createFailurePause` (a failed chunk: pause,
 * seek back, resume after a backoff), `createHeartbeatWatch` (Debezium's heartbeats → "the source
 * is current"), `trackMembership` (connected state, the member file, leaving a crashed consumer's
 * membership) and `prepareTopics`; `run` wires them for one consumer and drains at the end.
 */
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { heartbeatTsMs, type RawRecord } from '../decode/index.ts';
import { authenticationError } from './auth-failure.ts';
import {
  type BatchControl,
  createKafkaClient,
  type FetchedBatch,
  type GroupConsumer,
  type GroupConsumerEvents,
  type KafkaClient,
} from './client.ts';
import { checkTopicStates, createMissingTopics, topicStates } from './data-topics.ts';
import { InFlightChunks, type Ticket } from './in-flight.ts';
import { LagMonitor, type LagSnapshot } from './lag-monitor.ts';
import {
  leaveOwnStaleMembership,
  type RecordedMember,
  recordMember,
  removeDeadPredecessor,
} from './predecessor.ts';
import type { KafkaConnection } from './security.ts';
import {
  checkTenantPartitions,
  ownsPartition,
  tenantTopics,
  type WriterOwnership,
  writerAssignment,
} from './writer-ownership.ts';

export interface KafkaSourceOptions {
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

/**
 * Two phases so consecutive chunks overlap on two cores: `prepare` (decode, this thread) of the
 * next chunks runs while `commit` (apply in the apply thread) of earlier ones is in flight. `commit`
 * resolves only after every SQLite transaction of its chunk committed; only then may its offsets be
 * committed to Kafka.
 */
export interface RecordsHandler<T> {
  /**
   * Before `prepare`, may wait (heartbeating) until the records can be decoded: the writer schemas
   * of Avro records are fetched here (schema-registry/resolver.ts). Returns early when `signal`
   * aborts; the chunk is then not handed over.
   */
  resolve?(
    records: readonly RawRecord[],
    hooks: { heartbeat: () => Promise<void>; signal: AbortSignal },
  ): Promise<void>;
  prepare(records: RawRecord[]): T;
  commit(prepared: T): Promise<void>;
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

/**
 * Debezium creates a topic with the first event of its table; subscribing needs all of them to
 * exist. Missing ones are created compacted like Debezium's, and the data topics' settings are
 * checked (data-topics.ts).
 */
async function prepareTopics(
  client: KafkaClient,
  options: KafkaSourceOptions,
  subscribed: readonly string[],
): Promise<void> {
  const owned = options.ownership;
  const missing = await createMissingTopics(
    client,
    subscribed,
    owned && { topics: tenantTopics(owned.topicPrefix), partitions: owned.writer.partitions },
  );
  if (missing.length > 0) options.logger.info({ topics: missing }, 'created missing data topics');
  checkTopicStates(
    await topicStates(client, options.topics),
    options.logger,
    options.refuseTruncatedTopics === true,
  );
  // After topicStates, whose retries wait out new partitions without their leader yet.
  if (owned) await checkTenantPartitions(client.admin, owned.writer, owned.topicPrefix);
}

/**
 * Debezium's heartbeats: the newest one seen, and the newest reported to `onSourceCurrent` once a
 * lag poll that started after it arrived found everything applied.
 */
function createHeartbeatWatch(options: KafkaSourceOptions, lag: LagMonitor, inFlight: InFlightChunks) {
  const readHeartbeat = options.readHeartbeat ?? heartbeatTsMs;
  let lastHeartbeat: { tsMs: number; receivedAtMs: number } | undefined;
  let reportedTsMs = 0;

  /** After a lag poll that started at `pollStartedAtMs`: report the heartbeat if caught up. */
  function confirm(pollStartedAtMs: number): void {
    const seen = lastHeartbeat;
    if (!seen || !options.onSourceCurrent || seen.tsMs <= reportedTsMs || seen.receivedAtMs > pollStartedAtMs)
      return;
    const snapshot = lag.snapshot();
    if (!snapshot.measured || snapshot.total > 0 || inFlight.events() > 0) return;
    reportedTsMs = seen.tsMs;
    options.onSourceCurrent(seen.tsMs).catch((err: unknown) => {
      // Not lost: the next heartbeat reports a later time.
      reportedTsMs = 0;
      options.logger.warn({ err: String(err) }, 'recording the source position of a heartbeat failed');
    });
  }

  return {
    isHeartbeatTopic: (topic: string) => topic === options.heartbeatTopic,
    /** Heartbeat records arrived (they still go through the pipeline, ignored, so offsets commit). */
    seen(records: readonly RawRecord[]): void {
      for (const record of records) {
        const value = record.value;
        const tsMs = readHeartbeat(typeof value === 'string' ? Buffer.from(value) : value);
        if (tsMs !== undefined && tsMs > (lastHeartbeat?.tsMs ?? 0))
          lastHeartbeat = { tsMs, receivedAtMs: Date.now() };
      }
    },
    async pollLag(): Promise<void> {
      const startedAt = Date.now();
      await lag.poll();
      confirm(startedAt);
    },
  };
}
type HeartbeatWatch = ReturnType<typeof createHeartbeatWatch>;

/**
 * Commits what is applied: one commit loop at a time, repeated while more became applied, each
 * round after the durability barrier.
 */
function createOffsetCommitter(
  consumer: GroupConsumer,
  inFlight: InFlightChunks,
  options: KafkaSourceOptions,
) {
  let committing: Promise<void> | undefined;

  /** The returned promise settles when the loop is done (the drain awaits it for the final commit). */
  function commitApplied(): Promise<void> {
    if (committing) return committing;
    const loop = (async () => {
      // Settle strictly after `committing` is assigned, even when there is nothing to commit.
      await null;
      try {
        for (let offsets = inFlight.commitable(); offsets.length > 0; offsets = inFlight.commitable()) {
          await options.durable?.();
          await consumer.commit(offsets);
          inFlight.committed(offsets);
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

  return { commitApplied };
}
type OffsetCommitter = ReturnType<typeof createOffsetCommitter>;

/**
 * Apply failed (disk full, I/O, apply thread died): the partition's uncommitted chunks are dropped,
 * it pauses and is read again from the first of them after a backoff.
 */
function createFailurePause(consumer: GroupConsumer, inFlight: InFlightChunks, options: KafkaSourceOptions) {
  const { logger } = options;
  /**
   * Resumes pending after a failure. Cleared at disconnect: resume() on a stopped consumer throws,
   * and in a timer that would be an uncaught exception (stop or a generation swap mid-failure).
   */
  const resumeTimers = new Set<NodeJS.Timeout>();
  const backoff = {
    attempt: 0,
    next() {
      this.attempt++;
      return Math.min(30_000, 500 * 2 ** (this.attempt - 1));
    },
    reset() {
      this.attempt = 0;
    },
  };

  function failed(ticket: Ticket, error: unknown): void {
    const from = inFlight.failed(ticket);
    if (from === undefined) return; // an earlier chunk of this partition already failed
    const { topic, partition } = ticket;
    const reported = options.onApplyFailure?.(error);
    if (!reported?.logged)
      logger.error({ err: error, topic, partition, from }, 'apply failed; partition paused');
    const where = [{ topic, partitions: [partition] }];
    try {
      consumer.pause(where);
      consumer.seek({ topic, partition, offset: from });
    } catch (seekError) {
      logger.warn({ err: String(seekError), topic, partition }, 'seek after apply failure failed');
    }
    const timer = setTimeout(() => {
      resumeTimers.delete(timer);
      try {
        consumer.resume(where);
      } catch (resumeError) {
        logger.warn({ err: String(resumeError), topic, partition }, 'resume after apply failure failed');
      }
    }, reported?.retryMs ?? backoff.next()).unref();
    resumeTimers.add(timer);
  }

  return {
    failed,
    /** A chunk applied: the next failure starts its backoff from the beginning. */
    succeeded: () => backoff.reset(),
    clear(): void {
      for (const timer of resumeTimers) clearTimeout(timer);
      resumeTimers.clear();
    },
  };
}
type FailurePause = ReturnType<typeof createFailurePause>;

/**
 * The batch callback: a fetched batch → chunks of at most maxBatchEvents, each resolved, prepared
 * and handed to `commit` without waiting for it. Before each chunk the fetcher (and so the broker)
 * waits while too much is being applied (backpressure).
 */
function handOverBatches<T>(parts: {
  options: KafkaSourceOptions;
  handler: RecordsHandler<T>;
  signal: AbortSignal;
  inFlight: InFlightChunks;
  heartbeats: HeartbeatWatch;
  commits: OffsetCommitter;
  failures: FailurePause;
  lag: LagMonitor;
}) {
  const { options, handler, signal, inFlight, heartbeats, commits, failures, lag } = parts;
  const bound = options.maxEventsInFlight;
  const maxEventsInFlight = typeof bound === 'function' ? bound : () => bound;

  return async (batch: FetchedBatch, control: BatchControl): Promise<void> => {
    const { topic, partition, records: all, highWatermark } = batch;
    const { heartbeat } = control;
    for (let i = 0; i < all.length; i += options.maxBatchEvents) {
      for (let limit = maxEventsInFlight(); inFlight.events() >= limit && !signal.aborted; ) {
        await Promise.race([inFlight.below(limit), sleep(1000)]);
        await heartbeat();
        limit = maxEventsInFlight();
      }
      const records = all.slice(i, i + options.maxBatchEvents);
      await handler.resolve?.(records, { heartbeat, signal });
      if (!control.owned() || signal.aborted) return;
      if (heartbeats.isHeartbeatTopic(topic)) heartbeats.seen(records);
      const first = (records[0] as RawRecord).offset;
      const last = (records[records.length - 1] as RawRecord).offset;
      const ticket = inFlight.add(topic, partition, first, last, records.length);
      if (!ticket) return; // blocked by a failed chunk until the seek takes effect
      const prepared = handler.prepare(records);
      handler.commit(prepared).then(
        () => {
          inFlight.applied(ticket);
          lag.applied(topic, partition, last, highWatermark);
          failures.succeeded();
          commits.commitApplied();
        },
        (error: unknown) => failures.failed(ticket, error),
      );
      control.handedOver(last);
      // Let the apply thread's answers (a macrotask) in between chunks, so the next group is
      // sent while this partition keeps decoding.
      await yieldToEventLoop();
    }
  };
}

/**
 * The consumer's membership: connected while joined, the member id recorded for the next worker's
 * takeover (predecessor.ts), and a crash the client restarts from leaves its old membership at once.
 * `fatal` rejects when the consumer crashed for good: run() ends with the error so the supervisor
 * restarts the process.
 */
function trackMembership(
  client: KafkaClient,
  options: KafkaSourceOptions,
  state: { connected: boolean },
  signal: AbortSignal,
): { events: GroupConsumerEvents; fatal: Promise<never> } {
  const { logger, memberFile } = options;
  /** This process's membership since its last join (a crash-restart leaves it: predecessor.ts). */
  let membership: RecordedMember | undefined;
  let fail!: (error: unknown) => void;
  const fatal = new Promise<never>((_, reject) => {
    fail = reject;
  });
  fatal.catch(() => {});
  const events: GroupConsumerEvents = {
    joined(member) {
      state.connected = true;
      membership = member;
      if (!memberFile) return;
      try {
        recordMember(memberFile, member);
      } catch (err) {
        // Only the next crash's takeover is slower (the session timeout): worth a line, not a stop.
        logger.warn({ err: String(err), memberFile }, 'could not record the group membership');
      }
    },
    disconnected() {
      state.connected = false;
    },
    crashed(error, restarting) {
      state.connected = false;
      // Refused credentials: run() ends with one line saying so (auth-failure.ts).
      if (!client.isAuthenticationFailure(error))
        logger.error({ err: error, restart: restarting }, 'consumer crashed');
      if (!restarting) fail(error);
      else if (membership) {
        const stale = membership;
        membership = undefined;
        void leaveOwnStaleMembership(client, stale, logger, { signal });
      }
    },
  };
  return { events, fatal };
}
