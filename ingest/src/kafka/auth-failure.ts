/**
 * Kafka refusing ingest's credentials is not a fault that waiting cures: kafkajs marks its
 * KafkaJSSASLAuthenticationError non-retriable, and a supervisor restarting the process would only be
 * refused again. So it ends the worker with ONE line naming the principal, the mechanism and the
 * settings to check (main.ts logs it and exits 2), instead of kafkajs's three error lines per
 * attempt; never a retry in plaintext or without credentials (security.ts).
 */
import type { SASLOptions } from 'kafkajs';

export class KafkaAuthenticationError extends Error {
  override readonly name = 'KafkaAuthenticationError';
}

const KAFKAJS_SASL_ERROR = 'KafkaJSSASLAuthenticationError';

/** kafkajs's SASL error, itself or as the cause of the error its retrier wraps it in. */
export function isSaslAuthenticationFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === KAFKAJS_SASL_ERROR) return true;
  }
  return false;
}

/** kafkajs's own lines about the refusal (the bridge logs them at debug: the worker logs one). */
export function isSaslAuthenticationLog(message: string, error: unknown): boolean {
  return /authentication failed/i.test(message) || /authentication failed/i.test(String(error ?? ''));
}

/** The one line: who was refused where, and what to check. */
export function authenticationError(
  error: unknown,
  sasl: SASLOptions | undefined,
  brokers: readonly string[],
): KafkaAuthenticationError {
  const who =
    sasl && 'username' in sasl
      ? `user '${sasl.username}' (SASL ${sasl.mechanism.toUpperCase()})`
      : 'the configured SASL principal';
  const reason = error instanceof Error ? error.message : String(error);
  return new KafkaAuthenticationError(
    `Kafka at ${brokers.join(',')} refused ${who}: ${reason} — check INGEST_KAFKA_SASL_USERNAME, INGEST_KAFKA_SASL_PASSWORD_FILE and INGEST_KAFKA_SASL_MECHANISM; not retried`,
    { cause: error },
  );
}
