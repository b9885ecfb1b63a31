/**
 * The Kafka side of the worker, and the ONLY module (with its siblings in kafka/) that imports
 * kafkajs. A consumer group over the captured tables' topics; eachBatch hands chunks of records
 * to the apply side without waiting for them, so kafkajs fetches on while they are applied, and
 * commits a partition's offsets to Kafka only up to where every SQLite transaction of its chunks
 * committed (in-flight.ts): at-least-once delivery + idempotent apply = exactly once in effect.
 */
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type Consumer, Kafka, type KafkaConfig, type KafkaMessage, type SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { heartbeatTsMs, type RawRecord } from '../decode/index.ts';
import { authenticationError, isSaslAuthenticationFailure } from './auth-failure.ts';
import { checkTopicStates, createMissingTopics, topicStates } from './data-topics.ts';
import { InFlightChunks, type Ticket } from './in-flight.ts';
import { LagMonitor, type LagSnapshot } from './lag-monitor.ts';
import { kafkaLogCreator } from './log-bridge.ts';
import {
  leaveOwnStaleMembership,
  type RecordedMember,
  recordMember,
  removeDeadPredecessor,
} from './predecessor.ts';

export interface KafkaSourceOptions {
  readonly brokers: readonly string[];
  /** TLS and SASL (security.ts kafkaConnectionOptions); omitted: plaintext, no authentication. */
  readonly security?: { readonly ssl?: NonNullable<KafkaConfig['ssl']>; readonly sasl?: SASLOptions };
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
   * function is read before each chunk (the bound follows the apply side, group-bound.ts).
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
   * Told of every failed apply before the partition pauses: `logged` = the caller reported it (a
   * storage fault is logged once per fault, not per partition and retry); `retryMs` replaces the
   * exponential backoff (a full disk is retried every few seconds so applying resumes soon after).
   */
  /**
   * Resolves once what SQLite committed so far is on disk (apply/durability.ts); offsets are
   * committed only after it. Omitted: offsets follow the SQLite commits directly.
   */
  readonly durable?: () => Promise<void>;
  readonly onApplyFailure?: (error: unknown) => { logged: boolean; retryMs?: number };
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

const toRecord = (topic: string, partition: number, m: KafkaMessage): RawRecord => ({
  topic,
  partition,
  offset: m.offset,
  key: m.key ?? null,
  value: m.value ?? null,
});

/** Broker gone: kafkajs retries with exponential backoff (0.3 s … 30 s) before a restart. */
const BROKER_RETRY = { initialRetryTime: 300, maxRetryTime: 30_000, retries: 10 };

export function createKafkaSource(options: KafkaSourceOptions): KafkaSource {
  const { logger } = options;
  const bound = options.maxEventsInFlight;
  const maxEventsInFlight = typeof bound === 'function' ? bound : () => bound;
  const readHeartbeat = options.readHeartbeat ?? heartbeatTsMs;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...options.security,
    logCreator: kafkaLogCreator(logger),
    retry: BROKER_RETRY,
  });
  const admin = kafka.admin();
  const lag = new LagMonitor(admin, options.groupId, options.topics);
  let isConnected = false;
  const subscribed = options.heartbeatTopic
    ? [...options.topics, options.heartbeatTopic]
    : [...options.topics];
  /** The newest heartbeat seen, and the newest reported to onSourceCurrent. */
  let lastHeartbeat: { tsMs: number; receivedAtMs: number } | undefined;
  let reportedTsMs = 0;

  /** After a lag poll that started at `pollStartedAtMs`: report the heartbeat if caught up. */
  function confirmHeartbeat(pollStartedAtMs: number): void {
    const seen = lastHeartbeat;
    if (!seen || !options.onSourceCurrent || seen.tsMs <= reportedTsMs || seen.receivedAtMs > pollStartedAtMs)
      return;
    const snapshot = lag.snapshot();
    if (!snapshot.measured || snapshot.total > 0 || inFlight.events() > 0) return;
    reportedTsMs = seen.tsMs;
    options.onSourceCurrent(seen.tsMs).catch((err: unknown) => {
      // Not lost: the next heartbeat reports a later time.
      reportedTsMs = 0;
      logger.warn({ err: String(err) }, 'recording the source position of a heartbeat failed');
    });
  }

  async function pollLag(): Promise<void> {
    const startedAt = Date.now();
    await lag.poll();
    confirmHeartbeat(startedAt);
  }

  async function ensureTopics(): Promise<void> {
    // Debezium creates a topic with the first event of its table; subscribe needs all of them to
    // exist. Missing ones are created compacted like Debezium's (data-topics.ts).
    const missing = await createMissingTopics(admin, subscribed);
    if (missing.length > 0) logger.info({ topics: missing }, 'created missing data topics');
    checkTopicStates(
      await topicStates(admin, options.topics),
      logger,
      options.refuseTruncatedTopics === true,
    );
  }

  async function consume<T>(
    consumer: Consumer,
    handler: RecordsHandler<T>,
    signal: AbortSignal,
  ): Promise<void> {
    await consumer.subscribe({ topics: subscribed, fromBeginning: options.fromBeginning });
    await consumer.run({
      eachBatchAutoResolve: false,
      // Offsets are committed by commitApplied() only: what kafkajs resolves is what it may fetch
      // past, not what is applied (in-flight.ts).
      autoCommit: false,
      // Several partitions in flight: the main thread decodes one while the apply thread (the one
      // writer, strictly in arrival order) applies others. Order within a partition is kept.
      partitionsConsumedConcurrently: options.partitionsInFlight,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const { topic, partition, messages, highWatermark } = batch;
        for (let i = 0; i < messages.length; i += options.maxBatchEvents) {
          // Backpressure: the fetcher (and so the broker) waits while too much is being applied.
          for (let bound = maxEventsInFlight(); inFlight.events() >= bound && !signal.aborted; ) {
            await Promise.race([inFlight.below(bound), sleep(1000)]);
            await heartbeat();
            bound = maxEventsInFlight();
          }
          const chunk = messages.slice(i, i + options.maxBatchEvents);
          const records = chunk.map((m) => toRecord(topic, partition, m));
          await handler.resolve?.(records, { heartbeat, signal });
          if (!isRunning() || isStale() || signal.aborted) return;
          if (topic === options.heartbeatTopic) {
            // Noted here; the records still go through the pipeline (ignored), so offsets commit.
            for (const m of chunk) {
              const tsMs = readHeartbeat(m.value ?? null);
              if (tsMs !== undefined && tsMs > (lastHeartbeat?.tsMs ?? 0))
                lastHeartbeat = { tsMs, receivedAtMs: Date.now() };
            }
          }
          const first = (chunk[0] as KafkaMessage).offset;
          const last = (chunk[chunk.length - 1] as KafkaMessage).offset;
          const ticket = inFlight.add(topic, partition, first, last, chunk.length);
          if (!ticket) return; // blocked by a failed chunk until the seek takes effect
          const prepared = handler.prepare(records);
          handler.commit(prepared).then(
            () => {
              inFlight.applied(ticket);
              lag.applied(topic, partition, last, highWatermark);
              backoff.reset();
              commitApplied(consumer);
            },
            (error: unknown) => applyFailed(consumer, ticket, error),
          );
          resolveOffset(last);
          // Let the apply thread's answers (a macrotask) in between chunks, so the next group is
          // sent while this partition keeps decoding.
          await yieldToEventLoop();
        }
      },
    });
  }

  const inFlight = new InFlightChunks();
  let committing: Promise<void> | undefined;

  /**
   * Commits what is applied: one commit loop at a time, repeated while more became applied. The
   * returned promise settles when the loop is done (stop() awaits it for the final commit).
   */
  function commitApplied(consumer: Consumer): Promise<void> {
    if (committing) return committing;
    const loop = (async () => {
      // Settle strictly after `committing` is assigned, even when there is nothing to commit.
      await null;
      try {
        for (let offsets = inFlight.commitable(); offsets.length > 0; offsets = inFlight.commitable()) {
          await options.durable?.();
          await consumer.commitOffsets([...offsets]);
          inFlight.committed(offsets);
        }
        return true;
      } catch (error) {
        // Not lost: the next applied chunk (or the drain at stop) commits again; at worst a restart
        // replays applied records, which the version guards skip.
        logger.warn({ err: String(error) }, 'offset commit failed');
        return false;
      }
    })();
    committing = loop.then((ok) => {
      committing = undefined;
      // Applied while the loop was finishing: commit it now rather than with the next chunk.
      if (ok && inFlight.commitable().length > 0) return commitApplied(consumer);
    });
    return committing;
  }

  /**
   * Apply failed (disk full, I/O, apply thread died): the partition's uncommitted chunks are
   * dropped, it pauses and is read again from the first of them after a backoff.
   */
  function applyFailed(consumer: Consumer, ticket: Ticket, error: unknown): void {
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

  return {
    lag: () => lag.snapshot(),
    connected: () => isConnected,
    async run(handler, signal) {
      const consumer = kafka.consumer({
        groupId: options.groupId,
        sessionTimeout: options.sessionTimeoutMs,
        heartbeatInterval: Math.floor(options.sessionTimeoutMs / 10),
        maxBytes: options.fetchMaxBytes,
        // A short fetch long-poll keeps a drain (stop, generation swap) within about a second.
        maxWaitTimeInMs: 1000,
        maxBytesPerPartition: options.fetchMaxBytes,
        retry: BROKER_RETRY,
      });
      const { CRASH, GROUP_JOIN, DISCONNECT, STOP } = consumer.events;
      const { memberFile } = options;
      /** This process's membership since its last join (a crash-restart leaves it: predecessor.ts). */
      let membership: RecordedMember | undefined;
      consumer.on(GROUP_JOIN, ({ payload }) => {
        isConnected = true;
        membership = { groupId: payload.groupId, memberId: payload.memberId };
        if (!memberFile) return;
        try {
          recordMember(memberFile, { groupId: payload.groupId, memberId: payload.memberId });
        } catch (err) {
          // Only the next crash's takeover is slower (the session timeout): worth a line, not a stop.
          logger.warn({ err: String(err), memberFile }, 'could not record the group membership');
        }
      });
      consumer.on(DISCONNECT, () => {
        isConnected = false;
      });
      consumer.on(STOP, () => {
        isConnected = false;
      });
      // kafkajs restarts the consumer itself after retriable failures; a crash it will not
      // restart from ends run() with an error so the supervisor restarts the process.
      const fatal = new Promise<never>((_, reject) => {
        consumer.on(CRASH, ({ payload }) => {
          isConnected = false;
          // Refused credentials: run() ends with one line saying so (auth-failure.ts).
          if (!isSaslAuthenticationFailure(payload.error))
            logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
          if (!payload.restart) reject(payload.error);
          else if (membership) {
            const stale = membership;
            membership = undefined;
            void leaveOwnStaleMembership(kafka, stale, logger, { signal });
          }
        });
      });
      fatal.catch(() => {});
      const refused = (error: unknown) =>
        isSaslAuthenticationFailure(error)
          ? authenticationError(error, options.security?.sasl, options.brokers)
          : error;

      await admin.connect().catch((error: unknown) => {
        throw refused(error);
      });
      const poller = setInterval(() => {
        pollLag().catch((err) => logger.warn({ err: String(err) }, 'lag poll failed'));
      }, 2000);
      try {
        await ensureTopics();
        await pollLag();
        if (memberFile) await removeDeadPredecessor(kafka, options.groupId, memberFile, logger);
        const stopped = new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await consumer.connect();
        await consume(consumer, handler, signal);
        await Promise.race([stopped, fatal]);
        // Drain: fetch nothing more, let every handed-over chunk commit, then commit its offsets.
        consumer.pause(subscribed.map((topic) => ({ topic })));
        await Promise.race([inFlight.below(1), fatal]);
        await commitApplied(consumer);
        // A chunk that committed while the last loop was finishing: one more round.
        if (inFlight.commitable().length > 0) await commitApplied(consumer);
      } catch (error) {
        throw refused(error);
      } finally {
        clearInterval(poller);
        for (const timer of resumeTimers) clearTimeout(timer);
        resumeTimers.clear();
        // disconnect() waits for the running eachBatch and leaves the group. It commits nothing:
        // with autoCommit off, kafkajs never commits the offsets resolveOffset() marked at hand-over,
        // so what Kafka holds is only what commitApplied() committed after SQLite
        // (test/ingest-apply-failure.e2e.test.ts stops the worker mid-failure and checks).
        await consumer
          .disconnect()
          .catch((err) => logger.warn({ err: String(err) }, 'consumer disconnect failed'));
        await admin.disconnect().catch(() => {});
        isConnected = false;
      }
    },
  };
}
