/**
 * Fast takeover after a crash. A process killed with SIGKILL never sends LeaveGroup, so the broker
 * keeps its member — and its partitions — until the session times out (INGEST_SESSION_TIMEOUT_MS,
 * 30 s by default): a restarted worker joins, and the rebalance waits for the dead member until then.
 *
 * kafkajs 2.2.4 cannot use static membership (KIP-345: it never sends `group.instance.id`), which is
 * the usual cure. So each worker records the member id the coordinator gave it in a small file of its
 * data directory, and the next worker on that directory sends LeaveGroup for it before it joins
 * (KafkaClient.leaveGroup, client.ts): the broker drops the dead member at once and the new one gets
 * every partition in its first rebalance.
 *
 * Safe because one data directory has one writer: the recorded member can only be a predecessor
 * (dead, or stopped and already gone: the broker then answers UNKNOWN_MEMBER_ID, which is fine).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { GroupMember, KafkaClient } from './client.ts';

/** Where a data directory records its worker's group membership. */
export const memberFilePath = (dataDir: string) => join(dataDir, '.ingest-group-member.json');

export type RecordedMember = GroupMember;

/** The recorded membership, or undefined when there is none or it is unreadable (not an error). */
export function readRecordedMember(file: string): RecordedMember | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as Partial<RecordedMember>;
    if (typeof value.groupId === 'string' && typeof value.memberId === 'string' && value.memberId !== '')
      return { groupId: value.groupId, memberId: value.memberId };
  } catch {
    // A torn or foreign file: the worst case is waiting for the session timeout, as without it.
  }
  return undefined;
}

/** Records the membership atomically (a crash mid-write leaves the previous file whole). */
export function recordMember(file: string, member: RecordedMember): void {
  // A fresh data directory may not exist yet at the first join (the writer creates it with its
  // first batch): without this the first membership went unrecorded, and a crash before the next
  // join made the restart wait for the session timeout (found by test/ingest-writers.e2e.test.ts).
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...member, recordedAt: new Date().toISOString() })}\n`);
  renameSync(tmp, file);
}

export type TakeoverResult = 'none' | 'left' | 'already-gone' | 'unsupported' | 'failed';

/**
 * Sends LeaveGroup for `member`. Never throws: on any failure the worker joins anyway and waits for
 * the session timeout, as it would without this.
 */
async function leaveGroupAs(
  client: KafkaClient,
  member: RecordedMember,
  logger: Logger,
  leftMessage: string,
): Promise<TakeoverResult> {
  const { groupId, memberId } = member;
  const startedAt = Date.now();
  try {
    const result = await client.leaveGroup(member);
    if (result === 'unsupported')
      logger.warn('cannot remove the previous group member: the Kafka client cannot send LeaveGroup for it');
    if (result === 'left') logger.info({ groupId, memberId, ms: Date.now() - startedAt }, leftMessage);
    return result;
  } catch (error) {
    logger.warn(
      { err: String(error), groupId, memberId },
      'could not remove the previous group member; joining waits for its session timeout',
    );
    return 'failed';
  }
}

/** At start: LeaveGroup for the member recorded in `file` if it belongs to `groupId`. */
export async function removeDeadPredecessor(
  client: KafkaClient,
  groupId: string,
  file: string,
  logger: Logger,
): Promise<TakeoverResult> {
  const recorded = readRecordedMember(file);
  if (!recorded || recorded.groupId !== groupId) return 'none';
  return leaveGroupAs(client, recorded, logger, 'removed the previous worker from the consumer group');
}

/**
 * After the client restarts a crashed consumer (a broker outage outlasted its retries), the new
 * consumer joins as a new member, and a restarted broker still holds the old one from its stored
 * group state: the join would wait for that member's session timeout. The old membership is this
 * process's own, known in memory; it is left as soon as a coordinator answers. Only that id is
 * ever sent (never re-read from the file, which the new join overwrites). Retries while the broker
 * is still away, until `signal` aborts.
 */
export async function leaveOwnStaleMembership(
  client: KafkaClient,
  member: RecordedMember,
  logger: Logger,
  {
    attempts = 20,
    delayMs = 1000,
    signal,
  }: { attempts?: number; delayMs?: number; signal?: AbortSignal } = {},
): Promise<TakeoverResult> {
  let result: TakeoverResult = 'failed';
  for (let attempt = 1; attempt <= attempts && !signal?.aborted; attempt++) {
    result = await leaveGroupAs(client, member, logger, 'left the consumer group as the crashed consumer');
    if (result !== 'failed') return result;
    await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
  }
  return result;
}
