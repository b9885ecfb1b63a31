/**
 * The Kafka side of the worker, and the ONLY module (with its siblings in kafka/) that imports
 * kafkajs. A consumer group over the captured tables' topics; eachBatch with manual offset
 * resolution: a chunk's offsets are resolved (and committed) only after `handle` returned, i.e.
 * after every SQLite transaction of that chunk committed (at-least-once + idempotent apply).
 */
import { type Consumer, Kafka, type KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import type { RawRecord } from '../decode/index.ts';
import { LagMonitor, type LagSnapshot } from './lag-monitor.ts';
import { kafkaLogCreator } from './log-bridge.ts';

export interface KafkaSourceOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  readonly maxBatchEvents: number;
  readonly fetchMaxBytes: number;
  readonly sessionTimeoutMs: number;
  /** 1 with a synchronous apply; more with the apply thread. */
  readonly partitionsInFlight: number;
  readonly logger: Logger;
}

/**
 * Two phases so consecutive chunks overlap on two cores: `prepare` (decode, this thread) of chunk
 * n+1 runs while `commit` (apply in the apply thread) of chunk n is in flight. `commit` resolves
 * only after every SQLite transaction of its chunk committed; then its offsets are resolved.
 */
export interface RecordsHandler<T> {
  prepare(records: RawRecord[]): T;
  commit(prepared: T): Promise<void>;
}

export interface KafkaSource {
  /** Consumes until `signal` aborts, then drains the current chunk, commits and disconnects. */
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

export function createKafkaSource(options: KafkaSourceOptions): KafkaSource {
  const { logger } = options;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logCreator: kafkaLogCreator(logger),
    // Broker gone: kafkajs retries with exponential backoff (0.3 s … 30 s) before a restart.
    retry: { initialRetryTime: 300, maxRetryTime: 30_000, retries: 10 },
  });
  const admin = kafka.admin();
  const lag = new LagMonitor(admin, options.groupId, options.topics);
  let isConnected = false;

  async function ensureTopics(): Promise<void> {
    // Debezium creates a topic with the first event of its table; subscribe needs all of them to
    // exist. Missing ones are created with the broker's defaults (partitions, replication).
    const existing = new Set(await admin.listTopics());
    const missing = options.topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({ topics: missing.map((topic) => ({ topic })), waitForLeaders: true });
      logger.info({ topics: missing }, 'created missing data topics');
    }
  }

  async function consume<T>(
    consumer: Consumer,
    handler: RecordsHandler<T>,
    signal: AbortSignal,
  ): Promise<void> {
    await consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommit: true,
      autoCommitInterval: 1000,
      autoCommitThreshold: null,
      // Several partitions in flight: the main thread decodes one while the apply thread (the one
      // writer, strictly in arrival order) applies another. Order within a partition is kept.
      partitionsConsumedConcurrently: options.partitionsInFlight,
      eachBatch: async ({
        batch,
        resolveOffset,
        heartbeat,
        commitOffsetsIfNecessary,
        isRunning,
        isStale,
        pause,
      }) => {
        const { topic, partition, messages } = batch;
        let inflight: { done: Promise<void>; last: string } | undefined;
        const settle = async () => {
          if (!inflight) return;
          const { done, last } = inflight;
          inflight = undefined;
          await done;
          resolveOffset(last);
          lag.applied(topic, partition, last, batch.highWatermark);
          backoff.reset();
          await heartbeat(); // long batches: keep the group session alive between chunks
          await commitOffsetsIfNecessary();
        };
        try {
          for (let i = 0; i < messages.length; i += options.maxBatchEvents) {
            if (!isRunning() || isStale() || signal.aborted) break;
            const chunk = messages.slice(i, i + options.maxBatchEvents);
            const prepared = handler.prepare(chunk.map((m) => toRecord(topic, partition, m)));
            await settle();
            const done = handler.commit(prepared);
            done.catch(() => {}); // awaited in settle(); this only silences the interim rejection
            inflight = { done, last: (chunk[chunk.length - 1] as KafkaMessage).offset };
          }
          await settle();
        } catch (error) {
          // Apply failed (disk full, I/O, apply thread died): the failed chunk is not resolved, the
          // partition pauses and is fetched again from the last resolved chunk after a backoff.
          const resume = pause();
          logger.error({ err: error, topic, partition }, 'apply failed; partition paused');
          setTimeout(resume, backoff.next()).unref();
        }
      },
    });
  }

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
        retry: { initialRetryTime: 300, maxRetryTime: 30_000, retries: 10 },
      });
      const { CRASH, GROUP_JOIN, DISCONNECT, STOP } = consumer.events;
      consumer.on(GROUP_JOIN, () => {
        isConnected = true;
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
          logger.error({ err: payload.error, restart: payload.restart }, 'consumer crashed');
          if (!payload.restart) reject(payload.error);
        });
      });
      fatal.catch(() => {});

      await admin.connect();
      const poller = setInterval(() => {
        lag.poll().catch((err) => logger.warn({ err: String(err) }, 'lag poll failed'));
      }, 2000);
      try {
        await ensureTopics();
        await lag.poll();
        const stopped = new Promise<void>((resolve) => {
          if (signal.aborted) resolve();
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await consumer.connect();
        await consume(consumer, handler, signal);
        await Promise.race([stopped, fatal]);
      } finally {
        clearInterval(poller);
        // disconnect() waits for the running eachBatch, commits resolved offsets, leaves the group.
        await consumer
          .disconnect()
          .catch((err) => logger.warn({ err: String(err) }, 'consumer disconnect failed'));
        await admin.disconnect().catch(() => {});
        isConnected = false;
      }
    },
  };
}
