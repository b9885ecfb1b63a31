/**
 * A writer of a deployment split by company (docs/scaling.md; issue 28): with
 * INGEST_OWNERSHIP_FILE and INGEST_WRITER_NAME, this worker applies only its partitions of the
 * tenant topics (`appliedPartitions` of its entry in the ownership file, @pda/projections/model
 * kafka/writer-ownership.ts) and every partition of the control topics and of Debezium's heartbeat topic.
 * Without them (`undefined` everywhere below) nothing changes: every partition of every topic.
 */
import {
  appliedPartitions,
  type Change,
  companyPartition,
  isUuid,
  listCompanyFiles,
  ownershipWriter,
  readOwnershipFile,
  TENANT_TABLES,
} from '@pda/projections/model';
import type { KafkaAdmin, TopicPartitions } from './client.ts';

export interface WriterOwnership {
  /** The ownership file, as configured (logged, never its content). */
  readonly file: string;
  readonly writer: string;
  /** Partitions of every tenant topic (the connector's `partition.topic.num`). */
  readonly partitions: number;
  /** The tenant partitions this writer applies (serves and builds), ascending. */
  readonly applied: readonly number[];
}

/** Reads and checks the file; throws OwnershipError (one line) for a bad file or an unknown name. */
export function loadWriterOwnership(file: string, writer: string): WriterOwnership {
  const ownership = readOwnershipFile(file);
  const entry = ownershipWriter(ownership, writer);
  const applied = [...appliedPartitions(entry)].sort((a, b) => a - b);
  return { file, writer, partitions: ownership.partitions, applied };
}

const TENANT = new Set<string>(TENANT_TABLES);

export function tenantTopics(prefix: string): string[] {
  return TENANT_TABLES.map((table) => `${prefix}.public.${table}`);
}

function isTenantTopic(prefix: string, topic: string): boolean {
  const table = topic.startsWith(`${prefix}.public.`) ? topic.slice(prefix.length + 8) : undefined;
  return table !== undefined && TENANT.has(table);
}

/**
 * What this writer's one-member group takes of the topics it subscribes: its partitions of the
 * tenant topics, every partition of the others (control topics, heartbeats).
 */
export function writerAssignment(
  ownership: WriterOwnership,
  prefix: string,
  subscribed: readonly string[],
): TopicPartitions[] {
  return subscribed.map((topic) =>
    isTenantTopic(prefix, topic) ? { topic, partitions: ownership.applied } : { topic },
  );
}

/** Whether a partition is this writer's (lag, readiness and catch-up count only those). */
export function ownsPartition(
  ownership: WriterOwnership | undefined,
  prefix: string,
): (topic: string, partition: number) => boolean {
  if (ownership === undefined) return () => true;
  const applied = new Set(ownership.applied);
  return (topic, partition) => !isTenantTopic(prefix, topic) || applied.has(partition);
}

/**
 * Defence in depth behind the assignment: the company a tenant change belongs to, when that company
 * is not this writer's (a record produced on the wrong partition, a connector that disagrees with
 * the file); undefined: apply it. The company is the row's company_id, or the key's for a delete;
 * a delete whose key has no company (the unpartitioned connector) cannot be told and is applied
 * (its route decides, plan-tenant.ts).
 */
export function foreignCompanyOf(ownership: WriterOwnership): (change: Change) => string | undefined {
  const applied = new Set(ownership.applied);
  return (change) => {
    if (change.kind === 'truncate' || !TENANT.has(change.table)) return undefined;
    const company = change.kind === 'upsert' ? change.row?.company_id : change.key?.company_id;
    if (!isUuid(company)) return undefined;
    return applied.has(companyPartition(company, ownership.partitions)) ? undefined : company;
  };
}

export class OwnershipMismatchError extends Error {
  override readonly name = 'OwnershipMismatchError';
}

/**
 * At start: every tenant topic must have exactly the file's number of partitions, or a company's
 * partition here is not the one the connector sends its events to.
 */
export async function checkTenantPartitions(
  admin: KafkaAdmin,
  ownership: WriterOwnership,
  prefix: string,
): Promise<void> {
  const wrong: string[] = [];
  for (const topic of tenantTopics(prefix)) {
    const count = (await admin.topicOffsets(topic)).length;
    if (count !== ownership.partitions) wrong.push(`${topic} has ${count}`);
  }
  if (wrong.length > 0)
    throw new OwnershipMismatchError(
      `the connector and the ownership file disagree: ${ownership.file} says ${ownership.partitions} partitions per tenant topic, but ${wrong.join(', ')}; fix the file or the topics (partition.topic.num) before starting writer "${ownership.writer}"`,
    );
}

/** Company files in `dataDir` whose company this writer does not apply (its ownership shrank). */
export function unownedCompanyFiles(dataDir: string, ownership: WriterOwnership): string[] {
  const applied = new Set(ownership.applied);
  return listCompanyFiles(dataDir).filter((id) => !applied.has(companyPartition(id, ownership.partitions)));
}

/** The command that removes them (ingest/README.md, "Writers split by company"). */
export const REMOVE_UNOWNED_COMMAND = 'pnpm --filter @pda/ingest run remove-unowned';
