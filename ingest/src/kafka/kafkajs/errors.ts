/** How kafkajs says what ingest asks of its errors (client.ts isAuthenticationFailure, isRetriable). */

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

/** kafkajs marks the errors its own retrier would retry. */
export const isRetriable = (error: unknown): boolean =>
  (error as { retriable?: unknown } | null)?.retriable === true;

/** The broker's error code name on a kafkajs protocol error (UNKNOWN_MEMBER_ID, …). */
export const errorType = (error: unknown): unknown => (error as { type?: unknown } | null)?.type;
