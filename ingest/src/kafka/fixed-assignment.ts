/**
 * The assignment of a writer's own consumer group when writers are split by company (kafka/writer-ownership.ts):
 * the group has one live member, and it must get exactly the writer's partitions, at every join, so
 * a restart never moves a company's partitions (its file lives on this writer's disk). Kafka's
 * assignors spread partitions over members; this one does not spread anything.
 *
 * Each member announces a token in its subscription (a random id per process); the group's leader
 * (always a live member: it is the one computing this) gives the whole assignment to the member
 * carrying its own token, i.e. itself, and nothing to any other member: a crashed predecessor the
 * coordinator has not dropped yet, or a second process started on the same group by mistake, gets
 * no partition, so two processes never apply the same partitions at once.
 */
import type { TopicPartitions } from './client.ts';

export interface AssignedMember {
  readonly memberId: string;
  /** The token the member announced; undefined: none readable. */
  readonly token: string | undefined;
}

export type MemberAssignment = Record<string, number[]>;

export function fixedAssignment(parts: {
  readonly members: readonly AssignedMember[];
  /** The leader's own token. */
  readonly own: string;
  /** The partitions to take: those named, or every partition of a topic named without them. */
  readonly wanted: readonly TopicPartitions[];
  /** The topic's partitions as the cluster's metadata has them. */
  readonly partitionsOf: (topic: string) => readonly number[];
}): Map<string, MemberAssignment> {
  const { members, own, wanted, partitionsOf } = parts;
  const sorted = [...members].sort((a, b) =>
    a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0,
  );
  const taker = sorted.find((m) => m.token === own) ?? sorted[0];
  const result = new Map<string, MemberAssignment>();
  for (const member of sorted) result.set(member.memberId, {});
  if (taker === undefined) return result;
  const assignment: MemberAssignment = {};
  for (const { topic, partitions } of wanted) {
    const existing = partitionsOf(topic);
    const take = partitions === undefined ? [...existing] : partitions.filter((p) => existing.includes(p));
    if (take.length > 0) assignment[topic] = take.sort((a, b) => a - b);
  }
  result.set(taker.memberId, assignment);
  return result;
}
