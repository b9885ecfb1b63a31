/**
 * Kafka refusing ingest's credentials is not a fault that waiting cures: the client marks the
 * refusal as not retriable (kafkajs: KafkaJSSASLAuthenticationError, kafkajs/errors.ts), and a
 * supervisor restarting the process would only be refused again. So it ends the worker with ONE
 * line naming the principal, the mechanism and the settings to check (main.ts logs it and exits 2),
 * instead of the client's error lines per attempt; never a retry in plaintext or without
 * credentials (security.ts).
 */
import type { SaslCredentials } from './security.ts';

export class KafkaAuthenticationError extends Error {
  override readonly name = 'KafkaAuthenticationError';
}

/** The one line: who was refused where, and what to check. */
export function authenticationError(
  error: unknown,
  sasl: SaslCredentials | undefined,
  brokers: readonly string[],
): KafkaAuthenticationError {
  const who = sasl
    ? `user '${sasl.username}' (SASL ${sasl.mechanism.toUpperCase()})`
    : 'the configured SASL principal';
  const reason = error instanceof Error ? error.message : String(error);
  return new KafkaAuthenticationError(
    `Kafka at ${brokers.join(',')} refused ${who}: ${reason} — check INGEST_KAFKA_SASL_USERNAME, INGEST_KAFKA_SASL_PASSWORD_FILE and INGEST_KAFKA_SASL_MECHANISM; not retried`,
    { cause: error },
  );
}
