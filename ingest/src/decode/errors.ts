/**
 * A value or envelope that cannot be decoded. Thrown inside the decoder and turned into a
 * `dead-letter` result at its boundary (decode-message.ts); never escapes to the consumer.
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

export function fail(reason: string): never {
  throw new DecodeError(reason);
}
