/**
 * LeaveGroup on behalf of another member (../predecessor.ts: the takeover after a crash). kafkajs
 * 2.2.4 has no call for it and cannot use static membership (KIP-345: it never sends
 * `group.instance.id`), so this reaches the few internals it needs: a cluster of the client's own
 * settings, its group coordinator and the coordinator's leaveGroup request. kafkajs keeps them
 * behind a private symbol of the client; version 2.2.4 is pinned in the lockfile, and
 * test/ingest-recovery.e2e.test.ts fails if the takeover stops working.
 */
import type { Kafka } from 'kafkajs';
import type { GroupMember, LeaveResult } from '../client.ts';
import { errorType } from './errors.ts';

interface CoordinatorBroker {
  leaveGroup(request: { groupId: string; memberId: string }): Promise<unknown>;
}
interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(request: { groupId: string }): Promise<CoordinatorBroker>;
}
type CreateCluster = (options: {
  metadataMaxAge: number;
  allowAutoTopicCreation: boolean;
}) => InternalCluster;

function clusterFactory(kafka: Kafka): CreateCluster | undefined {
  const symbol = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  const factory = symbol ? (kafka as unknown as Record<symbol, unknown>)[symbol] : undefined;
  return typeof factory === 'function' ? (factory as CreateCluster) : undefined;
}

/** KafkaClient.leaveGroup for kafkajs: throws when the request failed (other than an unknown member). */
export async function leaveGroupAs(kafka: Kafka, member: GroupMember): Promise<LeaveResult> {
  const createCluster = clusterFactory(kafka);
  if (!createCluster) return 'unsupported';
  const { groupId, memberId } = member;
  const cluster = createCluster({ metadataMaxAge: 300_000, allowAutoTopicCreation: false });
  try {
    await cluster.connect();
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    await coordinator.leaveGroup({ groupId, memberId });
    return 'left';
  } catch (error) {
    if (errorType(error) === 'UNKNOWN_MEMBER_ID') return 'already-gone';
    throw error;
  } finally {
    await cluster.disconnect().catch(() => {});
  }
}
