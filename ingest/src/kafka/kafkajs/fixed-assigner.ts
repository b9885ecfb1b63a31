/**
 * kafkajs's side of fixedAssignment (../fixed-assignment.ts): a custom `partitionAssigner`, the one
 * way kafkajs 2.2.4 lets a consumer choose its partitions (it has no manual assign). The token
 * travels in the subscription's userData.
 */
import { randomUUID } from 'node:crypto';
import kafkajs, { type PartitionAssigner } from 'kafkajs';
import type { TopicPartitions } from '../client.ts';
import { fixedAssignment } from '../fixed-assignment.ts';

// kafkajs is CommonJS: Node's ESM loader does not see this export as a named one.
const { AssignerProtocol } = kafkajs;

export const FIXED_ASSIGNER_NAME = 'PdaFixedAssigner';

export function fixedPartitionAssigner(wanted: readonly TopicPartitions[]): PartitionAssigner {
  const own = randomUUID();
  return ({ cluster }) => ({
    name: FIXED_ASSIGNER_NAME,
    version: 0,
    async assign({ members }) {
      const decoded = members.map(({ memberId, memberMetadata }) => {
        let token: string | undefined;
        try {
          token = AssignerProtocol.MemberMetadata.decode(memberMetadata)?.userData?.toString('utf8');
        } catch {
          token = undefined;
        }
        return { memberId, token };
      });
      const assignments = fixedAssignment({
        members: decoded,
        own,
        wanted,
        partitionsOf: (topic) => cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId),
      });
      return [...assignments].map(([memberId, assignment]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment,
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      return {
        name: FIXED_ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: 0,
          topics,
          userData: Buffer.from(own, 'utf8'),
        }),
      };
    },
  });
}
