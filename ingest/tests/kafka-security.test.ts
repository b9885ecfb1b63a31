/**
 * Kafka over TLS + SASL and the schema registry over HTTPS with credentials (ingest/README.md,
 * "Kafka over TLS and SASL"): the settings become kafkajs's `ssl`/`sasl` and the registry's Basic
 * header, secrets come only from files and never show in a printed configuration, every
 * combination that would authenticate in clear or not at all is refused with the one config line,
 * and a refusal by the broker is one line, not kafkajs's three per attempt.
 * test/kafka-sasl.e2e.test.ts runs the same settings against a real SASL_SSL listener.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import { logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';
import { authenticationError, KafkaAuthenticationError } from '../src/kafka/auth-failure.ts';
import { isSaslAuthenticationFailure } from '../src/kafka/kafkajs/errors.ts';
import { kafkaLogCreator } from '../src/kafka/kafkajs/log-bridge.ts';
import { describeKafkaSecurity, kafkaConnectionOptions } from '../src/kafka/security.ts';
import { createLogger } from '../src/logger.ts';
import { createSchemaRegistryClient } from '../src/schema-registry/client.ts';
import { fetchTrusting } from '../src/schema-registry/https-get.ts';

const dir = mkdtempSync(join(tmpdir(), 'pda-kafka-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

const PASSWORD = 'correct-horse-battery-staple-0123';
// Not a real certificate: the settings check only that a file holds PEM of the right kind.
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const passwordFile = file('password', `${PASSWORD}\n`);
const caFile = file('ca.pem', CA);
const keyFile = file('client.key', KEY);
const base = { INGEST_KAFKA_BROKERS: 'broker.example:9093', INGEST_DATA_DIR: '/tmp/x' };
const sasl = {
  ...base,
  INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
  INGEST_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
  INGEST_KAFKA_SASL_USERNAME: 'ingest',
  INGEST_KAFKA_SASL_PASSWORD_FILE: passwordFile,
};

/** The one configuration line, or undefined when the settings are accepted. */
function refusal(env: Record<string, string>): string | undefined {
  try {
    parseConfig(env);
    return undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.message;
  }
}

describe('Kafka security settings', () => {
  it('PLAINTEXT by default: no TLS, no SASL', () => {
    const config = parseConfig(base);
    expect(config.kafka.security).toEqual({ protocol: 'PLAINTEXT', tls: undefined, sasl: undefined });
    expect(kafkaConnectionOptions(config.kafka.security)).toEqual({});
  });

  it('SASL_SSL + SCRAM-SHA-512: the password read from its file, the CA trusted, the checks on', () => {
    const config = parseConfig({ ...sasl, INGEST_KAFKA_SSL_CA_FILE: caFile });
    expect(kafkaConnectionOptions(config.kafka.security)).toEqual({
      ssl: { ca: CA, rejectUnauthorized: true },
      sasl: { mechanism: 'scram-sha-512', username: 'ingest', password: PASSWORD },
    });
    expect(describeKafkaSecurity(config.kafka.security)).toEqual({
      protocol: 'SASL_SSL',
      mechanism: 'SCRAM-SHA-512',
      username: 'ingest',
    });
  });

  it('SCRAM-SHA-256 and PLAIN over TLS; without a CA file the system CAs (a managed cluster)', () => {
    for (const [mechanism, kafkajs] of [
      ['SCRAM-SHA-256', 'scram-sha-256'],
      ['PLAIN', 'plain'],
    ]) {
      const config = parseConfig({ ...sasl, INGEST_KAFKA_SASL_MECHANISM: mechanism as string });
      expect(kafkaConnectionOptions(config.kafka.security)).toEqual({
        ssl: true,
        sasl: { mechanism: kafkajs, username: 'ingest', password: PASSWORD },
      });
    }
  });

  it('SSL with a client certificate (mutual TLS), no SASL', () => {
    const config = parseConfig({
      ...base,
      INGEST_KAFKA_SECURITY_PROTOCOL: 'SSL',
      INGEST_KAFKA_SSL_CA_FILE: caFile,
      INGEST_KAFKA_SSL_CERT_FILE: caFile,
      INGEST_KAFKA_SSL_KEY_FILE: keyFile,
    });
    expect(kafkaConnectionOptions(config.kafka.security)).toEqual({
      ssl: { ca: CA, cert: CA, key: KEY, rejectUnauthorized: true },
    });
  });

  it('never prints a secret: JSON and inspect of the configuration name the files', () => {
    const config = parseConfig({ ...sasl, INGEST_KAFKA_SSL_CA_FILE: caFile });
    const printed = [JSON.stringify(config), inspect(config, { depth: 5 })];
    for (const text of printed) {
      expect(text).not.toContain(PASSWORD);
      expect(text).toContain(passwordFile);
    }
    const logged = captureLog((logger) => logger.info({ config }, 'started'));
    expect(logged).not.toContain(PASSWORD);
  });

  it.each([
    [
      { ...sasl, INGEST_KAFKA_SASL_PASSWORD_FILE: join(dir, 'missing') },
      /^invalid ingest configuration: INGEST_KAFKA_SASL_PASSWORD_FILE: cannot read .*missing: ENOENT$/,
    ],
    [
      { ...sasl, INGEST_KAFKA_SASL_PASSWORD_FILE: file('empty', '\n') },
      /INGEST_KAFKA_SASL_PASSWORD_FILE: .*empty is empty/,
    ],
    [{ ...sasl, INGEST_KAFKA_SASL_USERNAME: '' }, /INGEST_KAFKA_SASL_USERNAME/],
    [{ ...sasl, INGEST_KAFKA_SASL_MECHANISM: 'GSSAPI' }, /INGEST_KAFKA_SASL_MECHANISM/],
    [{ ...sasl, INGEST_KAFKA_SECURITY_PROTOCOL: 'TLS' }, /INGEST_KAFKA_SECURITY_PROTOCOL/],
    [
      { ...base, INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL' },
      /INGEST_KAFKA_SASL_MECHANISM: required .*INGEST_KAFKA_SASL_USERNAME: required .*INGEST_KAFKA_SASL_PASSWORD_FILE: required/,
    ],
    // Credentials set while the protocol does not authenticate would look like authentication.
    [
      { ...sasl, INGEST_KAFKA_SECURITY_PROTOCOL: 'SSL' },
      /INGEST_KAFKA_SASL_MECHANISM: set, but INGEST_KAFKA_SECURITY_PROTOCOL=SSL does not authenticate/,
    ],
    [
      { ...base, INGEST_KAFKA_SSL_CA_FILE: caFile },
      /INGEST_KAFKA_SSL_CA_FILE: set, but INGEST_KAFKA_SECURITY_PROTOCOL=PLAINTEXT does not use TLS/,
    ],
    [
      { ...sasl, INGEST_KAFKA_SSL_CERT_FILE: caFile },
      /INGEST_KAFKA_SSL_CERT_FILE: a client certificate needs INGEST_KAFKA_SSL_KEY_FILE/,
    ],
    [
      { ...sasl, INGEST_KAFKA_SSL_CA_FILE: passwordFile },
      /INGEST_KAFKA_SSL_CA_FILE: .* holds no PEM certificate/,
    ],
    // No plaintext fallback: SASL without TLS only when asked for loudly, and PLAIN never.
    [
      { ...sasl, INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT' },
      /SASL_PLAINTEXT sends every record in clear .*INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS=true/,
    ],
    [
      {
        ...sasl,
        INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        INGEST_KAFKA_SASL_MECHANISM: 'PLAIN',
        INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: 'true',
      },
      /INGEST_KAFKA_SASL_MECHANISM: PLAIN sends the password in clear/,
    ],
    [
      { ...sasl, INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: 'true' },
      /INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: only meaningful with SASL_PLAINTEXT/,
    ],
  ])('refuses %#: one line naming the setting', (env, expected) => {
    const message = refusal(env as Record<string, string>);
    expect(message).toMatch(expected);
    expect(message?.split('\n')).toHaveLength(1);
    expect(message).not.toContain(PASSWORD);
  });

  it('SCRAM without TLS only with the opt-in', () => {
    const config = parseConfig({
      ...sasl,
      INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
      INGEST_KAFKA_ALLOW_SASL_WITHOUT_TLS: 'true',
    });
    expect(kafkaConnectionOptions(config.kafka.security)).toEqual({
      sasl: { mechanism: 'scram-sha-512', username: 'ingest', password: PASSWORD },
    });
  });
});

describe('a refusal by the broker', () => {
  // What kafkajs 2.2.4 throws (names from its errors.js), itself or wrapped by its retrier.
  const saslError = Object.assign(
    new Error(
      'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
    ),
    { name: 'KafkaJSSASLAuthenticationError', retriable: false },
  );
  const wrapped = Object.assign(new Error(saslError.message, { cause: saslError }), {
    name: 'KafkaJSNonRetriableError',
  });

  it('is recognised, wrapped or not; other errors are not', () => {
    expect(isSaslAuthenticationFailure(saslError)).toBe(true);
    expect(isSaslAuthenticationFailure(wrapped)).toBe(true);
    expect(isSaslAuthenticationFailure(new Error('Connection error: ECONNREFUSED'))).toBe(false);
    expect(isSaslAuthenticationFailure('Authentication failed')).toBe(false);
  });

  it('becomes one line naming the user, the mechanism and the settings to check, no password', () => {
    const error = authenticationError(
      wrapped,
      { mechanism: 'scram-sha-512', username: 'ingest', password: PASSWORD },
      ['broker.example:9093'],
    );
    expect(error).toBeInstanceOf(KafkaAuthenticationError);
    expect(error.message).toMatch(
      /^Kafka at broker\.example:9093 refused user 'ingest' \(SASL SCRAM-SHA-512\): SASL SCRAM SHA512 authentication failed: .* check INGEST_KAFKA_SASL_USERNAME, INGEST_KAFKA_SASL_PASSWORD_FILE and INGEST_KAFKA_SASL_MECHANISM; not retried$/,
    );
    expect(error.message).not.toContain(PASSWORD);
  });

  it("kafkajs's own lines about it go to debug; a broker's error answers are warnings; its other errors stay errors", () => {
    const lines = captureLog((logger) => {
      const log = kafkaLogCreator(logger)();
      const entry = (namespace: string, message: string, extra: Record<string, unknown> = {}) => ({
        namespace,
        level: logLevel.ERROR,
        label: 'ERROR',
        log: { timestamp: '', logger: 'kafkajs', message, ...extra },
      });
      log(
        entry('Connection', 'Response SaslAuthenticate(key: 36, version: 1)', { error: saslError.message }),
      );
      log(entry('BrokerPool', saslError.message));
      log(entry('Connection', 'Connection error: connect ECONNREFUSED'));
      // Handled by kafkajs (a topic created meanwhile by Debezium) or reaching ingest as the call's error.
      log(
        entry('Connection', 'Response CreateTopics(key: 19, version: 3)', { error: 'Topic creation errors' }),
      );
      log(
        entry('Connection', 'Response LeaveGroup(key: 13, version: 3)', {
          error: 'The coordinator is not aware of this member',
        }),
      );
      log(entry('Consumer', 'Crash: KafkaJSNumberOfRetriesExceeded'));
    });
    const levels = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(levels.map((l) => l.level)).toEqual([20, 20, 50, 40, 40, 50]);
  });
});

describe('the schema registry with credentials', () => {
  const https = { ...base, INGEST_SCHEMA_REGISTRY_URL: 'https://registry.example/apis/ccompat/v7' };

  it('sends HTTP Basic with the password from its file, over https with a private CA', async () => {
    const config = parseConfig({
      ...https,
      INGEST_SCHEMA_REGISTRY_USERNAME: 'ingest',
      INGEST_SCHEMA_REGISTRY_PASSWORD_FILE: passwordFile,
      INGEST_SCHEMA_REGISTRY_CA_FILE: caFile,
    });
    expect(config.schemaRegistry.ca?.pem).toBe(CA);
    const seen: Headers[] = [];
    const client = createSchemaRegistryClient({
      url: config.schemaRegistry.url,
      timeoutMs: 1000,
      username: config.schemaRegistry.username,
      password: config.schemaRegistry.password,
      fetch: async (_url, init) => {
        seen.push(new Headers(init?.headers));
        return new Response(JSON.stringify({ schema: '"string"' }), { status: 200 });
      },
    });
    await expect(client.fetchSchema(7)).resolves.toBe('"string"');
    expect(seen[0]?.get('authorization')).toBe(
      `Basic ${Buffer.from(`ingest:${PASSWORD}`).toString('base64')}`,
    );
    expect(JSON.stringify(config)).not.toContain(PASSWORD);
  });

  it.each([
    [
      {
        ...base,
        INGEST_SCHEMA_REGISTRY_URL: 'http://registry.example',
        INGEST_SCHEMA_REGISTRY_USERNAME: 'u',
        INGEST_SCHEMA_REGISTRY_PASSWORD_FILE: passwordFile,
      },
      /INGEST_SCHEMA_REGISTRY_USERNAME: needs an https INGEST_SCHEMA_REGISTRY_URL/,
    ],
    [
      { ...https, INGEST_SCHEMA_REGISTRY_USERNAME: 'u' },
      /INGEST_SCHEMA_REGISTRY_USERNAME: needs INGEST_SCHEMA_REGISTRY_PASSWORD_FILE/,
    ],
    [
      { ...base, INGEST_SCHEMA_REGISTRY_CA_FILE: caFile },
      /INGEST_SCHEMA_REGISTRY_CA_FILE: set without INGEST_SCHEMA_REGISTRY_URL/,
    ],
    [
      { ...base, INGEST_SCHEMA_REGISTRY_URL: `https://u:${PASSWORD}@registry.example` },
      /INGEST_SCHEMA_REGISTRY_URL: no credentials in the URL/,
    ],
  ])('refuses %#: credentials only over https, never in the URL', (env, expected) => {
    const message = refusal(env as Record<string, string>);
    expect(message).toMatch(expected);
    expect(message).not.toContain(PASSWORD);
  });

  it('the private-CA fetch speaks https only', async () => {
    await expect(fetchTrusting(CA)('http://registry.example/x')).rejects.toThrow(/only https/);
  });
});

function captureLog(write: (logger: ReturnType<typeof createLogger>) => void): string[] {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  write(createLogger('debug', 'test', sink));
  return lines;
}
