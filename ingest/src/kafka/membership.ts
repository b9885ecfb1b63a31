import type { Logger } from 'pino';
import type { GroupConsumerEvents, KafkaClient } from './client.ts';
import { leaveOwnStaleMembership, type RecordedMember, recordMember } from './predecessor.ts';

/** The part of the source's options (source.ts KafkaSourceOptions) membership reads. */
export interface MembershipOptions {
  /** Where the member id is recorded for the next worker's takeover (predecessor.ts). */
  readonly memberFile?: string;
  readonly logger: Logger;
}

/**
 * The consumer's membership: connected while joined, the member id recorded for the next worker's
 * takeover (predecessor.ts), and a crash the client restarts from leaves its old membership at once.
 * `fatal` rejects when the consumer crashed for good: run() ends with the error so the supervisor
 * restarts the process.
 */
export function trackMembership(
  client: KafkaClient,
  options: MembershipOptions,
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
