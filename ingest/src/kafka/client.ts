/**
 * What ingest needs from a Kafka client, and nothing more: the one seam between ingest and the
 * client library (docs/decisions/0012-kafka-client.md). Everything else in kafka/ — hand-over and
 * commit rules (source.ts, in-flight.ts), lag (lag-monitor.ts), the data topics' check
 * (data-topics.ts), the takeover of a crashed predecessor (predecessor.ts) — is written against
 * these types. The one implementation is kafkajs's (kafkajs/client.ts); a client to replace it
 * implements `KafkaClient` and changes `createKafkaClient`, nothing else.
 */
import type { Logger } from 'pino';
import type { RawRecord } from '../decode/index.ts';
import { createKafkajsClient } from './kafkajs/client.ts';
import type { KafkaConnection } from './security.ts';

export interface TopicPartitions {
  readonly topic: string;
  /** Omitted: every partition of the topic. */
  readonly partitions?: readonly number[];
}

/** A partition's offset as a decimal string (Kafka offsets are int64). */
export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export interface PartitionWatermarks {
  readonly partition: number;
  /** The oldest offset still in the log, and the next one to be written. */
  readonly low: string;
  readonly high: string;
}

/** A consumer group's member, as the coordinator named it at its join. */
export interface GroupMember {
  readonly groupId: string;
  readonly memberId: string;
}

/** Records of one partition, in offset order, as one fetch delivered them. */
export interface FetchedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly RawRecord[];
  /** The partition's high watermark when fetched. */
  readonly highWatermark: string;
}

/** What the batch callback may do while it holds its batch. */
export interface BatchControl {
  /** Keeps this member in the group while the callback waits (backpressure, a schema fetch). */
  heartbeat(): Promise<void>;
  /** False once the consumer stops or the partition went to another member: hand nothing more over. */
  owned(): boolean;
  /**
   * The records up to `offset` are handed over: the client may fetch past them. Not a commit:
   * offsets reach the group only through `GroupConsumer.commit`.
   */
  handedOver(offset: string): void;
}

export interface GroupConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** A group without committed offsets starts at the oldest record (else at the end). */
  readonly fromBeginning: boolean;
  readonly sessionTimeoutMs: number;
  /** Bytes per fetch response and per partition in it. */
  readonly fetchMaxBytes: number;
  /** Partitions whose batch callbacks may run at once (one at a time within a partition). */
  readonly partitionsInFlight: number;
  /**
   * Exactly these partitions of the subscribed topics (a topic without partitions: all of them),
   * at every join, instead of the group spreading them over its members: a split writer's own
   * one-member group (fixed-assignment.ts). Omitted: the client's usual assignor.
   */
  readonly assignment?: readonly TopicPartitions[];
}

/** What the consumer tells of its membership while it runs. */
export interface GroupConsumerEvents {
  joined(member: GroupMember): void;
  disconnected(): void;
  /**
   * The consumer failed; with `restarting` the client rejoins by itself (as a new member), else
   * it is done and the run must end with `error`.
   */
  crashed(error: unknown, restarting: boolean): void;
}

/** One consumer group membership, for one run: started once, stopped once. */
export interface GroupConsumer {
  /**
   * Joins the group and calls `eachBatch` for what it fetches, never twice at once for one
   * partition; offsets are never committed by the client itself.
   */
  start(eachBatch: (batch: FetchedBatch, control: BatchControl) => Promise<void>): Promise<void>;
  /** Commits `offsets` (the next offset to read, per partition) to the group. */
  commit(offsets: readonly PartitionOffset[]): Promise<void>;
  /** Stops or restarts fetching these partitions (throws once the consumer is stopped). */
  pause(where: readonly TopicPartitions[]): void;
  resume(where: readonly TopicPartitions[]): void;
  /** The next fetch of the partition starts at `at.offset`. */
  seek(at: PartitionOffset): void;
  /** Waits for the running batch callbacks, leaves the group and disconnects; commits nothing. */
  stop(): Promise<void>;
}

/** The admin requests ingest makes: topics, their settings and offsets. */
export interface KafkaAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  /**
   * Creates the topics with these topic configs (and `partitions` each; omitted: the broker's
   * default) and waits for their partitions' leaders.
   */
  createTopics(
    topics: readonly string[],
    config: Readonly<Record<string, string>>,
    partitions?: number,
  ): Promise<void>;
  /** `cleanup.policy` of each topic (absent: the broker did not say). */
  cleanupPolicies(topics: readonly string[]): Promise<Map<string, string>>;
  topicOffsets(topic: string): Promise<PartitionWatermarks[]>;
  /** The group's committed offsets; a negative offset: none committed for the partition. */
  groupOffsets(groupId: string, topics: readonly string[]): Promise<PartitionOffset[]>;
}

export type LeaveResult = 'left' | 'already-gone' | 'unsupported';

export interface KafkaClient {
  readonly admin: KafkaAdmin;
  consumer(options: GroupConsumerOptions, events: GroupConsumerEvents): GroupConsumer;
  /**
   * Removes `member` from its group at once (LeaveGroup on its behalf): a crashed predecessor, or
   * this process's consumer before the client restarted it. 'already-gone': the coordinator no
   * longer knew it; 'unsupported': this client cannot send it. Throws when the request failed.
   */
  leaveGroup(member: GroupMember): Promise<LeaveResult>;
  /** The broker refused the credentials (never cured by retrying: auth-failure.ts). */
  isAuthenticationFailure(error: unknown): boolean;
  /** A failure the client marks as worth retrying (a partition without its leader yet, …). */
  isRetriable(error: unknown): boolean;
}

export interface KafkaClientOptions {
  readonly clientId: string;
  readonly brokers: readonly string[];
  /** TLS and SASL (security.ts kafkaConnectionOptions); omitted: plaintext, no authentication. */
  readonly security?: KafkaConnection;
  readonly logger: Logger;
}

/** The client ingest runs on: kafkajs (kafkajs/client.ts). */
export function createKafkaClient(options: KafkaClientOptions): KafkaClient {
  return createKafkajsClient(options);
}
