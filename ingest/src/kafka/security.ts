/**
 * How ingest reaches Kafka: plaintext (the default, the native stack), TLS, or SASL over TLS —
 * SCRAM-SHA-512/256 or PLAIN, what Confluent Cloud, MSK, Aiven and locked-down clusters require
 * (docs/operations.md, "Kafka is a trust boundary"). The INGEST_KAFKA_* settings below are part of
 * config.ts's schema; `kafkaSecurityProblems` adds the checks that span several of them,
 * `kafkaSecurityOf` maps them to the typed KafkaSecurityConfig (IngestConfig.kafka.security), and
 * `kafkaConnectionOptions` turns that into the client's `ssl` and `sasl` (KafkaConnection).
 *
 * There is no fallback: a client configured for SASL_SSL that cannot complete TLS or whose
 * credentials are refused never retries in plaintext or without credentials (auth-failure.ts).
 */
import type { ConnectionOptions } from 'node:tls';
import { z } from 'zod';
import type { SecretFile } from '../secret-file.ts';
import { certificatesFile, type PemFile, privateKeyFile, secretFile } from '../setting-files.ts';

/** SASL as the Kafka client takes it: the mechanism's lower-case name and the credentials. */
export type SaslCredentials = {
  [M in SaslMechanism]: { readonly mechanism: M; readonly username: string; readonly password: string };
}[SaslMechanism];
type SaslMechanism = 'scram-sha-512' | 'scram-sha-256' | 'plain';

/** How to reach the brokers: TLS (`true`: the system's CAs) and SASL; neither for PLAINTEXT. */
export interface KafkaConnection {
  readonly ssl?: true | ConnectionOptions;
  readonly sasl?: SaslCredentials;
}

const SASL_MECHANISMS = {
  'SCRAM-SHA-512': 'scram-sha-512',
  'SCRAM-SHA-256': 'scram-sha-256',
  PLAIN: 'plain',
} as const;

export const KAFKA_SECURITY_SETTINGS = {
  /** Kafka's `security.protocol` names. SASL_PLAINTEXT only with the opt-in below. */
  INGEST_KAFKA_SECURITY_PROTOCOL: z
    .enum(['PLAINTEXT', 'SSL', 'SASL_SSL', 'SASL_PLAINTEXT'])
    .default('PLAINTEXT'),
  INGEST_KAFKA_SASL_MECHANISM: z.enum(['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN']).optional(),
  INGEST_KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  INGEST_KAFKA_SASL_PASSWORD_FILE: secretFile(),
  /** CA certificates the broker's certificate must chain to; unset: the system's (public CAs). */
  INGEST_KAFKA_SSL_CA_FILE: certificatesFile(),
  /** Client certificate and key, for brokers that require mutual TLS. */
  INGEST_KAFKA_SSL_CERT_FILE: certificatesFile(),
  INGEST_KAFKA_SSL_KEY_FILE: privateKeyFile(),
  /**
   * SCRAM without TLS (SASL_PLAINTEXT): the password does not cross the wire, but every record does,
   * in clear, and nothing proves the broker is the right one. Refused unless this is `true`.
   */
  INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
};

/** The settings as parsed from the environment, before the checks that span several of them. */
export interface KafkaSecuritySettings {
  readonly INGEST_KAFKA_SECURITY_PROTOCOL: SecurityProtocol;
  readonly INGEST_KAFKA_SASL_MECHANISM?: SaslMechanismName | undefined;
  readonly INGEST_KAFKA_SASL_USERNAME?: string | undefined;
  readonly INGEST_KAFKA_SASL_PASSWORD_FILE?: SecretFile | undefined;
  readonly INGEST_KAFKA_SSL_CA_FILE?: PemFile | undefined;
  readonly INGEST_KAFKA_SSL_CERT_FILE?: PemFile | undefined;
  readonly INGEST_KAFKA_SSL_KEY_FILE?: SecretFile | undefined;
  readonly INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: boolean;
}

type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_SSL' | 'SASL_PLAINTEXT';
type SaslMechanismName = keyof typeof SASL_MECHANISMS;

/**
 * The checked settings (config.ts IngestConfig.kafka.security): `tls` present exactly for SSL and
 * SASL_SSL, `sasl` exactly for SASL_*, so no consumer meets half a setting. Secrets stay SecretFiles
 * until kafkaConnectionOptions hands them to the client.
 */
export interface KafkaSecurityConfig {
  readonly protocol: SecurityProtocol;
  readonly tls:
    | {
        /** Unset: the system's CAs. */
        readonly ca: PemFile | undefined;
        /** Mutual TLS: both or neither (kafkaSecurityProblems). */
        readonly client: { readonly cert: PemFile; readonly key: SecretFile } | undefined;
      }
    | undefined;
  readonly sasl:
    | { readonly mechanism: SaslMechanismName; readonly username: string; readonly password: SecretFile }
    | undefined;
}

/** The combinations no single setting can refuse; each problem is `NAME: why`. */
export function kafkaSecurityProblems(c: KafkaSecuritySettings): string[] {
  const problems: string[] = [];
  const protocol = c.INGEST_KAFKA_SECURITY_PROTOCOL;
  const sasl = protocol.startsWith('SASL_');
  const tls = protocol.endsWith('SSL');
  const saslSettings = [
    ['INGEST_KAFKA_SASL_MECHANISM', c.INGEST_KAFKA_SASL_MECHANISM],
    ['INGEST_KAFKA_SASL_USERNAME', c.INGEST_KAFKA_SASL_USERNAME],
    ['INGEST_KAFKA_SASL_PASSWORD_FILE', c.INGEST_KAFKA_SASL_PASSWORD_FILE],
  ] as const;
  for (const [name, value] of saslSettings) {
    if (sasl && value === undefined)
      problems.push(`${name}: required with INGEST_KAFKA_SECURITY_PROTOCOL=${protocol}`);
    // Set but unused would look like authentication while none happens.
    if (!sasl && value !== undefined)
      problems.push(
        `${name}: set, but INGEST_KAFKA_SECURITY_PROTOCOL=${protocol} does not authenticate (SASL_SSL does)`,
      );
  }
  const tlsFiles = [
    ['INGEST_KAFKA_SSL_CA_FILE', c.INGEST_KAFKA_SSL_CA_FILE],
    ['INGEST_KAFKA_SSL_CERT_FILE', c.INGEST_KAFKA_SSL_CERT_FILE],
    ['INGEST_KAFKA_SSL_KEY_FILE', c.INGEST_KAFKA_SSL_KEY_FILE],
  ] as const;
  for (const [name, value] of tlsFiles) {
    if (!tls && value !== undefined)
      problems.push(
        `${name}: set, but INGEST_KAFKA_SECURITY_PROTOCOL=${protocol} does not use TLS (SSL or SASL_SSL do)`,
      );
  }
  if ((c.INGEST_KAFKA_SSL_CERT_FILE === undefined) !== (c.INGEST_KAFKA_SSL_KEY_FILE === undefined))
    problems.push(
      'INGEST_KAFKA_SSL_CERT_FILE: a client certificate needs INGEST_KAFKA_SSL_KEY_FILE, and the key the certificate',
    );
  if (protocol === 'SASL_PLAINTEXT') {
    if (c.INGEST_KAFKA_SASL_MECHANISM === 'PLAIN')
      problems.push(
        'INGEST_KAFKA_SASL_MECHANISM: PLAIN sends the password in clear; use it only with SASL_SSL',
      );
    else if (!c.INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS)
      problems.push(
        'INGEST_KAFKA_SECURITY_PROTOCOL: SASL_PLAINTEXT sends every record in clear to an unverified broker; use SASL_SSL, or set INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS=true',
      );
  } else if (c.INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS) {
    problems.push(
      `INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: only meaningful with SASL_PLAINTEXT, not ${protocol}`,
    );
  }
  return problems;
}

/** The settings once kafkaSecurityProblems found none (config.ts): what each protocol uses, nothing more. */
export function kafkaSecurityOf(c: KafkaSecuritySettings): KafkaSecurityConfig {
  const protocol = c.INGEST_KAFKA_SECURITY_PROTOCOL;
  const cert = c.INGEST_KAFKA_SSL_CERT_FILE;
  const key = c.INGEST_KAFKA_SSL_KEY_FILE;
  const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
  return Object.freeze({
    protocol,
    tls: tls
      ? Object.freeze({
          ca: c.INGEST_KAFKA_SSL_CA_FILE,
          client: cert && key ? Object.freeze({ cert, key }) : undefined,
        })
      : undefined,
    sasl: protocol.startsWith('SASL_') ? saslOf(c) : undefined,
  });
}

function saslOf(c: KafkaSecuritySettings): NonNullable<KafkaSecurityConfig['sasl']> {
  const mechanism = c.INGEST_KAFKA_SASL_MECHANISM;
  const username = c.INGEST_KAFKA_SASL_USERNAME;
  const password = c.INGEST_KAFKA_SASL_PASSWORD_FILE;
  if (!mechanism || !username || !password)
    throw new Error('SASL settings incomplete (kafkaSecurityProblems checks them)');
  return Object.freeze({ mechanism, username, password });
}

/** The settings as the client's connection options (KafkaConnection); neither for PLAINTEXT. */
export function kafkaConnectionOptions(security: KafkaSecurityConfig): KafkaConnection {
  const { tls, sasl } = security;
  const options: { ssl?: true | ConnectionOptions; sasl?: SaslCredentials } = {};
  if (tls) {
    const { ca, client } = tls;
    // Node's checks stay on: the chain (to `ca`, else the system's CAs) and the broker's name.
    options.ssl =
      ca || client
        ? {
            ...(ca && { ca: ca.pem }),
            ...(client && { cert: client.cert.pem, key: client.key.reveal() }),
            rejectUnauthorized: true,
          }
        : true;
  }
  if (sasl) {
    options.sasl = {
      mechanism: SASL_MECHANISMS[sasl.mechanism],
      username: sasl.username,
      password: sasl.password.reveal(),
    };
  }
  return options;
}

/** For the start-up line: what is used, never a secret. */
export function describeKafkaSecurity(security: KafkaSecurityConfig): Record<string, string> {
  return {
    protocol: security.protocol,
    ...(security.sasl && { mechanism: security.sasl.mechanism, username: security.sasl.username }),
  };
}
