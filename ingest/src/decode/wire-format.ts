/**
 * The schema-registry wire format (Confluent's, which Apicurio's converter writes with
 * `apicurio.registry.as-confluent=true`, dev-world/stack/README.md): magic byte 0, the writer schema's id
 * as a 4-byte big-endian integer, then the Avro binary datum. A JSON message starts with `{` (or
 * whitespace), never with byte 0, so the format is told apart per message and both may share a topic
 * (a connector switched from JSON to Avro, or back).
 */
export const WIRE_HEADER_BYTES = 5;

/** The writer schema id of a wire-format record, undefined for anything else (JSON, text). */
export function schemaIdOf(bytes: Uint8Array | string | null): number | undefined {
  if (bytes === null || typeof bytes === 'string' || bytes.length < WIRE_HEADER_BYTES || bytes[0] !== 0) {
    return undefined;
  }
  return (
    (((bytes[1] as number) << 24) | // ids above 2^31 stay positive: >>> 0
      ((bytes[2] as number) << 16) |
      ((bytes[3] as number) << 8) |
      (bytes[4] as number)) >>>
    0
  );
}
