// Reads real Debezium events back from Kafka for tests and the fixture capture script.
import { randomUUID } from 'node:crypto';
import { schemaIdOf } from '@pda/ingest';
import type { Kafka } from 'kafkajs';
import { type AvroReader, avroReader } from './avro-records.ts';

/**
 * One Kafka record; `keyJson`/`valueJson` keep the exact bytes of JSON records (ts_ns exceeds 2^53),
 * `keyBytes`/`valueBytes` those of Avro ones (then `key`/`value` are the decoded objects).
 */
export interface CapturedEvent {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: unknown;
  value: unknown;
  keyJson: string | null;
  valueJson: string | null;
  keyBytes?: Buffer | null;
  valueBytes?: Buffer | null;
  /** The writer schema (Avro schema JSON from the registry) of an Avro value. */
  valueSchema?: unknown;
}

export interface CollectOptions {
  topics: string[];
  /** Keep only the records a test cares about (the topics hold every earlier run's events too). */
  match: (event: CapturedEvent) => boolean;
  /** Stop once the kept records satisfy this. */
  until: (events: CapturedEvent[]) => boolean;
  timeoutMs?: number;
  /**
   * Where to start: offsets taken with `endOffsets` before the test wrote its rows, so a long-lived
   * stack's history (millions of benchmark events) is not read again. Default: the beginning.
   */
  from?: TopicOffsets;
}

/** Per topic, the offset of each partition to start reading at. */
export type TopicOffsets = ReadonlyMap<string, readonly { partition: number; offset: string }[]>;

/** The current end of each topic's partitions (creating missing topics first, like collectEvents). */
export async function endOffsets(kafka: Kafka, topics: string[]): Promise<TopicOffsets> {
  await ensureTopics(kafka, topics);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = new Map<string, { partition: number; offset: string }[]>();
    for (const topic of topics) {
      const partitions = await admin.fetchTopicOffsets(topic);
      offsets.set(
        topic,
        partitions.map((p) => ({ partition: p.partition, offset: p.high })),
      );
    }
    return offsets;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Consumes `topics` from the beginning (or `from`) under a throwaway consumer group until `until` holds.
 * Missing topics are created first (broker defaults, as Connect's topic.creation would), so a test
 * may start collecting before Debezium has written the first event of a table.
 */
export async function collectEvents(kafka: Kafka, options: CollectOptions): Promise<CapturedEvent[]> {
  await ensureTopics(kafka, options.topics);
  const groupId = `pda-test-${randomUUID()}`;
  if (options.from) await startGroupAt(kafka, groupId, options.from);
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
  const kept: CapturedEvent[] = [];
  let done = false;
  let resolveDone: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: options.topics, fromBeginning: true });
    let avro: AvroReader | undefined;
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const binary = message.key?.[0] === 0 || message.value?.[0] === 0;
        let event: CapturedEvent;
        if (binary) {
          // Avro (schema-registry wire format): decoded with the registry's writer schemas.
          avro ??= avroReader();
          const raw = { topic, partition, offset: message.offset, key: message.key, value: message.value };
          await avro.resolve([raw]);
          event = {
            topic,
            partition,
            offset: Number(message.offset),
            timestamp: Number(message.timestamp),
            key: avro.toObject(message.key, 'key'),
            value: avro.toObject(message.value, 'value'),
            keyJson: null,
            valueJson: null,
            keyBytes: message.key,
            valueBytes: message.value,
            valueSchema: writerSchemaJson(avro, message.value),
          };
        } else {
          const keyJson = message.key ? message.key.toString('utf8') : null;
          const valueJson = message.value ? message.value.toString('utf8') : null;
          event = {
            topic,
            partition,
            offset: Number(message.offset),
            timestamp: Number(message.timestamp),
            key: keyJson === null ? null : JSON.parse(keyJson),
            value: valueJson === null ? null : JSON.parse(valueJson),
            keyJson,
            valueJson,
          };
        }
        if (!done && options.match(event)) {
          kept.push(event);
          if (options.until(kept)) {
            done = true;
            resolveDone();
          }
        }
      },
    });
    const timeoutMs = options.timeoutMs ?? 90_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([finished, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      const seen = kept.map((e) => `${e.topic}@${e.offset}:${opOf(e)}`).join(', ');
      throw new Error(`events not complete after ${timeoutMs} ms; kept so far: [${seen}]`);
    }
    return kept;
  } finally {
    await consumer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
}

function writerSchemaJson(avro: AvroReader, bytes: Buffer | null): unknown {
  const id = schemaIdOf(bytes);
  const entry = id === undefined ? undefined : avro.schemas.get(id);
  return entry && 'json' in entry ? entry.json : undefined;
}

/** A new group's committed offsets: where its first consumer starts (instead of fromBeginning). */
async function startGroupAt(kafka: Kafka, groupId: string, from: TopicOffsets): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const [topic, partitions] of from)
      await admin.setOffsets({ groupId, topic, partitions: [...partitions] });
  } finally {
    await admin.disconnect();
  }
}

async function ensureTopics(kafka: Kafka, topics: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length > 0) {
      // Two creators may race (Debezium's first event, another test): "already exists" is fine.
      await admin.createTopics({ topics: missing.map((topic) => ({ topic })), waitForLeaders: true });
    }
  } finally {
    await admin.disconnect();
  }
}

/** `c`/`u`/`d`/`r` from the envelope, `tombstone` for a null value. */
export function opOf(event: CapturedEvent): string {
  if (event.value === null) return 'tombstone';
  return String(payloadOf(event.value)?.op ?? '?');
}

/** The `payload` of a `{schema, payload}` JsonConverter message (or the message without schemas). */
export function payloadOf(message: unknown): Record<string, unknown> | null {
  if (message === null || typeof message !== 'object') return null;
  const record = message as Record<string, unknown>;
  const payload = 'schema' in record && 'payload' in record ? record.payload : record;
  return payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : null;
}

/** The row id in a record key (single-column `id` keys; composite keys return their first column). */
export function keyId(event: CapturedEvent): string | undefined {
  const key = payloadOf(event.key);
  if (!key) return undefined;
  const id = key.id ?? Object.values(key)[0];
  return typeof id === 'string' ? id : undefined;
}

/**
 * The JSON line of the fixture file, embedding the record's exact bytes (Avro ones as base64, read
 * back by ingest's replay-line parser). `topic` overrides the record's (a private prefix renamed).
 */
export function fixtureLine(event: CapturedEvent, topic = event.topic): string {
  if (event.keyBytes !== undefined || event.valueBytes !== undefined) {
    return JSON.stringify({
      topic,
      partition: event.partition,
      offset: event.offset,
      keyBase64: event.keyBytes ? event.keyBytes.toString('base64') : null,
      valueBase64: event.valueBytes ? event.valueBytes.toString('base64') : null,
    });
  }
  const head = JSON.stringify({ topic, partition: event.partition, offset: event.offset });
  return `${head.slice(0, -1)},"key":${event.keyJson ?? 'null'},"value":${event.valueJson ?? 'null'}}`;
}

/** Counts events per `<table>:<op>` (table = last segment of the topic). */
export function tally(events: CapturedEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    const key = `${event.topic.split('.').at(-1)}:${opOf(event)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export function reached(events: CapturedEvent[], expected: Record<string, number>): boolean {
  const counts = tally(events);
  return Object.entries(expected).every(([key, n]) => (counts[key] ?? 0) >= n);
}
