/**
 * The schema registry over HTTPS with credentials (HTTP Basic: Confluent Cloud's API key + secret,
 * Aiven's and Karapace's users, a proxy in front of Apicurio): part of config.ts's schema, checked
 * together by `registryAccessProblems`. Credentials travel only over https; a private CA is trusted
 * for the registry alone (INGEST_SCHEMA_REGISTRY_CA_FILE), not for the whole process.
 */

import { z } from 'zod';
import type { SecretFile } from '../secret-file.ts';
import type { PemFile } from '../setting-files.ts';
import { certificatesFile, secretFile } from '../setting-files.ts';

export const SCHEMA_REGISTRY_ACCESS_SETTINGS = {
  INGEST_SCHEMA_REGISTRY_USERNAME: z.string().min(1).optional(),
  INGEST_SCHEMA_REGISTRY_PASSWORD_FILE: secretFile(),
  /** CA certificates the registry's certificate must chain to; unset: the system's. */
  INGEST_SCHEMA_REGISTRY_CA_FILE: certificatesFile(),
};

/** The registry's settings as parsed from the environment, before the checks that span several of them. */
export interface RegistryAccessSettings {
  readonly INGEST_SCHEMA_REGISTRY_URL?: string | undefined;
  readonly INGEST_SCHEMA_REGISTRY_USERNAME?: string | undefined;
  readonly INGEST_SCHEMA_REGISTRY_PASSWORD_FILE?: SecretFile | undefined;
  readonly INGEST_SCHEMA_REGISTRY_CA_FILE?: PemFile | undefined;
}

export function registryAccessProblems(c: RegistryAccessSettings): string[] {
  const problems: string[] = [];
  const url = c.INGEST_SCHEMA_REGISTRY_URL === undefined ? undefined : new URL(c.INGEST_SCHEMA_REGISTRY_URL);
  if (url && (url.username || url.password))
    problems.push(
      'INGEST_SCHEMA_REGISTRY_URL: no credentials in the URL (it is logged); use INGEST_SCHEMA_REGISTRY_USERNAME and INGEST_SCHEMA_REGISTRY_PASSWORD_FILE',
    );
  if (
    (c.INGEST_SCHEMA_REGISTRY_USERNAME === undefined) !==
    (c.INGEST_SCHEMA_REGISTRY_PASSWORD_FILE === undefined)
  )
    problems.push(
      'INGEST_SCHEMA_REGISTRY_USERNAME: needs INGEST_SCHEMA_REGISTRY_PASSWORD_FILE, and the password file a username',
    );
  const named = [
    ['INGEST_SCHEMA_REGISTRY_USERNAME', c.INGEST_SCHEMA_REGISTRY_USERNAME],
    ['INGEST_SCHEMA_REGISTRY_CA_FILE', c.INGEST_SCHEMA_REGISTRY_CA_FILE],
  ] as const;
  for (const [name, value] of named) {
    if (value === undefined) continue;
    if (!url) problems.push(`${name}: set without INGEST_SCHEMA_REGISTRY_URL`);
    // Basic credentials over http are readable by anyone on the path: refused, not warned about.
    else if (url.protocol !== 'https:') problems.push(`${name}: needs an https INGEST_SCHEMA_REGISTRY_URL`);
  }
  return problems;
}

/** The checked settings (config.ts IngestConfig.schemaRegistry); the password stays a SecretFile. */
export interface SchemaRegistryConfig {
  /** Unset: JSON records only; an Avro record waits until it is set. */
  readonly url: string | undefined;
  /** Per request; a slower answer is retried with backoff. */
  readonly timeoutMs: number;
  /** HTTP Basic, both or neither, only over https (registryAccessProblems). */
  readonly username: string | undefined;
  readonly password: SecretFile | undefined;
  /** Trusted for the registry alone; unset: the system's CAs. */
  readonly ca: PemFile | undefined;
}

export function schemaRegistryOf(
  c: RegistryAccessSettings & { readonly INGEST_SCHEMA_REGISTRY_TIMEOUT_MS: number },
): SchemaRegistryConfig {
  return Object.freeze({
    url: c.INGEST_SCHEMA_REGISTRY_URL,
    timeoutMs: c.INGEST_SCHEMA_REGISTRY_TIMEOUT_MS,
    username: c.INGEST_SCHEMA_REGISTRY_USERNAME,
    password: c.INGEST_SCHEMA_REGISTRY_PASSWORD_FILE,
    ca: c.INGEST_SCHEMA_REGISTRY_CA_FILE,
  });
}
