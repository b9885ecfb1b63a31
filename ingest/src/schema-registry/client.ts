/**
 * Reads writer schemas by id from a schema registry's Confluent-compatible API (`GET
 * <url>/schemas/ids/<id>`): Apicurio's `/apis/ccompat/v7` on our stack (dev-world/stack/README.md), and
 * equally Confluent Schema Registry or Karapace. The id is the one in each record's wire header.
 * Every failure that a later try may cure (refused, timed out, 5xx, and also 404: a registry restored
 * from a backup, or the wrong one configured) is `retriable`; the resolver waits and retries them
 * rather than dead-lettering good events. Only an answer that can never become an Avro schema is not.
 *
 * Over HTTPS with HTTP Basic credentials and a private CA when configured (settings.ts); the
 * password is sent only in the header, never in a URL or a log line.
 */
import type { SecretFile } from '../secret-file.ts';
import { fetchTrusting } from './https-get.ts';

export class SchemaFetchError extends Error {
  override readonly name = 'SchemaFetchError';
  readonly retriable: boolean;
  constructor(message: string, retriable: boolean) {
    super(message);
    this.retriable = retriable;
  }
}

export interface SchemaRegistryClient {
  /** The schema text (Avro schema JSON) of `id`; throws SchemaFetchError. */
  fetchSchema(id: number): Promise<string>;
  readonly url: string | undefined;
}

export function createSchemaRegistryClient(options: {
  readonly url: string | undefined;
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
  /** HTTP Basic credentials (config.ts allows them only with an https URL). */
  readonly username?: string | undefined;
  readonly password?: SecretFile | undefined;
  /** PEM CA certificates trusted for the registry only. */
  readonly ca?: string | undefined;
}): SchemaRegistryClient {
  const base = options.url?.replace(/\/+$/, '');
  const get = options.fetch ?? (options.ca ? fetchTrusting(options.ca) : fetch);
  const authorization =
    options.username !== undefined && options.password
      ? `Basic ${Buffer.from(`${options.username}:${options.password.reveal()}`).toString('base64')}`
      : undefined;
  return {
    url: base,
    async fetchSchema(id) {
      if (!base) {
        throw new SchemaFetchError(
          `Avro record (writer schema ${id}) but INGEST_SCHEMA_REGISTRY_URL is not set`,
          true,
        );
      }
      let response: Response;
      let text: string;
      try {
        response = await get(`${base}/schemas/ids/${id}`, {
          headers: {
            accept: 'application/vnd.schemaregistry.v1+json, application/json',
            ...(authorization && { authorization }),
          },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        const cause = error as Error & { cause?: { code?: string } };
        const why =
          cause.name === 'TimeoutError'
            ? `no answer within ${options.timeoutMs} ms`
            : (cause.cause?.code ?? cause.message);
        throw new SchemaFetchError(`schema registry ${base} unreachable: ${why}`, true);
      }
      if (!response.ok) {
        throw new SchemaFetchError(
          `schema registry ${base} answered ${response.status} for schema ${id}: ${text.slice(0, 200)}`,
          true,
        );
      }
      let body: { schema?: unknown; schemaType?: unknown };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        throw new SchemaFetchError(`schema registry ${base} answered schema ${id} with non-JSON`, true);
      }
      if (body.schemaType !== undefined && body.schemaType !== 'AVRO') {
        throw new SchemaFetchError(`schema ${id} is ${String(body.schemaType)}, not Avro`, false);
      }
      if (typeof body.schema !== 'string') {
        throw new SchemaFetchError(`schema registry ${base} answered schema ${id} without 'schema'`, true);
      }
      return body.schema;
    },
  };
}
