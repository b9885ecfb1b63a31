// Kafka as a trust boundary (docs/operations.md, "Kafka is a trust boundary"), on a private stack in
// SASL mode (PDA_STACK_KAFKA_SASL=1, dev-world/stack/README.md "Kafka over TLS + SASL"): Debezium in Kafka
// Connect produces as User:connect through the SASL_SSL listener; ingest, started as a process with
// the INGEST_KAFKA_* settings of ingest/README.md, authenticates (SCRAM-SHA-512, then PLAIN over
// TLS), reads the writer schemas from the registry over HTTPS with credentials, and applies a change
// made in PostgreSQL; a wrong password ends ingest with one line and exit code 2; and the ACLs
// refuse anyone but Connect writing the data topics, ingest included.
//
// The stack is its own (PDA_STACK_DIR in a temp dir, free ports): the shared one stays plaintext
// for the other e2e files. Starting it is most of this file's time: 30 s of 48 s in one run on the 2-core
// test machine, 110 s of 140 s in one at a load average of 14.
// PDA_TEST_KAFKA_SASL=0 leaves the file out (and says so).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readStackEnv } from '@pda/dev-world/stack';
import { registerKafkajsCodecs } from '@pda/ingest';
import { openCompanyReader } from '@pda/projections/read';
import { freePort } from '@pda/projections/testing';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, waitFor } from './src/stack-env.ts';

const disabled = process.env.PDA_TEST_KAFKA_SASL === '0';
if (disabled)
  console.warn('kafka-sasl.e2e: skipped (PDA_TEST_KAFKA_SASL=0): no private SASL_SSL stack started');

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'pda-kafka-sasl-'));
const stackDir = join(work, 'stack');

/** Six distinct free ports for the private stack. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

let stackVars: Record<string, string> = {};
const stackSh = (command: string) =>
  run('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), ...command.split(' ')], {
    env: { ...process.env, ...stackVars },
    timeout: 420_000,
    maxBuffer: 16 * 1024 * 1024,
  });

/** The private stack's env file, once `up` wrote it. */
let env: Record<string, string> = {};
const need = (name: string) => {
  const value = env[name];
  if (!value) throw new Error(`${name} missing from ${stackDir}/env`);
  return value;
};

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
const children: ChildProcess[] = [];

interface Ingest {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

function startIngest(vars: Record<string, string>): Ingest {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('INGEST_')));
  const child = spawn(
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, 'ingest/src/main.ts')],
    {
      env: { ...inherited, INGEST_ADMIN_PORT: '0', INGEST_LOG_LEVEL: 'info', ...vars },
      cwd: join(repoRoot, 'ingest'),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const lines: string[] = [];
  let pending = '';
  const collect = (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    lines.push(...complete.filter(Boolean));
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

/** ingest's settings for the private stack's SASL_SSL listener and HTTPS registry proxy. */
function saslSettings(dataDir: string, mechanism: string, passwordFile: string): Record<string, string> {
  return {
    INGEST_KAFKA_BROKERS: need('PDA_KAFKA_SASL_BROKERS'),
    INGEST_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    INGEST_KAFKA_SASL_MECHANISM: mechanism,
    INGEST_KAFKA_SASL_USERNAME: need('PDA_KAFKA_INGEST_USER'),
    INGEST_KAFKA_SASL_PASSWORD_FILE: passwordFile,
    INGEST_KAFKA_SSL_CA_FILE: need('PDA_KAFKA_CA_FILE'),
    INGEST_SCHEMA_REGISTRY_URL: `${registryProxy.url}/apis/ccompat/v7`,
    INGEST_SCHEMA_REGISTRY_USERNAME: 'ingest',
    INGEST_SCHEMA_REGISTRY_PASSWORD_FILE: registryProxy.passwordFile,
    INGEST_SCHEMA_REGISTRY_CA_FILE: need('PDA_KAFKA_CA_FILE'),
    INGEST_DATA_DIR: dataDir,
    INGEST_GROUP_ID: `pda-ingest-e2e-${randomUUID()}`,
  };
}

/**
 * The registry behind HTTPS with HTTP Basic, as a managed registry is: a proxy with the stack's own
 * certificate (issued for 127.0.0.1 by the stack's CA), refusing any request without the password.
 */
const registryProxy = { url: '', passwordFile: join(work, 'registry.password'), authorized: 0, refused: 0 };
let proxyServer: Server | undefined;

async function startRegistryProxy(): Promise<void> {
  const password = randomUUID();
  writeFileSync(registryProxy.passwordFile, `${password}\n`, { mode: 0o600 });
  const expected = `Basic ${Buffer.from(`ingest:${password}`).toString('base64')}`;
  const sasl = join(stackDir, 'kafka', 'sasl');
  const upstream = need('PDA_REGISTRY_URL');
  const server = createHttpsServer(
    { key: readFileSync(join(sasl, 'broker.key')), cert: readFileSync(join(sasl, 'broker.pem')) },
    (req, res) => {
      if (req.headers.authorization !== expected) {
        registryProxy.refused++;
        res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"' }).end();
        return;
      }
      registryProxy.authorized++;
      fetch(`${upstream}${req.url ?? '/'}`, { headers: { accept: req.headers.accept ?? '*/*' } })
        .then(async (answer) => {
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
          });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.writeHead(502).end());
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxyServer = server;
  registryProxy.url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function saslClient(user: 'ingest' | 'other' | 'connect'): Kafka {
  registerKafkajsCodecs();
  return new Kafka({
    clientId: `pda-sasl-e2e-${user}`,
    brokers: [need('PDA_KAFKA_SASL_BROKERS')],
    ssl: { ca: readFileSync(need('PDA_KAFKA_CA_FILE'), 'utf8') },
    sasl: {
      mechanism: 'scram-sha-512',
      username: need(`PDA_KAFKA_${user.toUpperCase()}_USER`),
      password: readFileSync(need(`PDA_KAFKA_${user.toUpperCase()}_PASSWORD_FILE`), 'utf8').trim(),
    },
    logLevel: logLevel.NOTHING,
    retry: { retries: 1, initialRetryTime: 200 },
  });
}

function siteName(dataDir: string, company: string, site: string): string | undefined {
  try {
    const db = openCompanyReader(dataDir, company);
    try {
      return db.prepare('SELECT name FROM sites WHERE id = ?').pluck().get(site) as string | undefined;
    } finally {
      db.close();
    }
  } catch {
    return undefined; // the company file does not exist yet
  }
}

describe.skipIf(disabled)('Kafka over TLS + SASL, with ACLs (private stack, PDA_STACK_KAFKA_SASL=1)', () => {
  let pool: pg.Pool | undefined;
  const company = randomUUID();
  const site = randomUUID();

  beforeAll(async () => {
    const [pgPort, kafka, controller, saslPort, connect, registry] = await freePorts(6);
    stackVars = {
      PDA_STACK_DIR: stackDir,
      PDA_STACK_KAFKA_SASL: '1',
      PDA_PG_PORT: String(pgPort),
      PDA_KAFKA_PORT: String(kafka),
      PDA_KAFKA_CONTROLLER_PORT: String(controller),
      PDA_KAFKA_SASL_PORT: String(saslPort),
      PDA_CONNECT_PORT: String(connect),
      PDA_REGISTRY_PORT: String(registry),
    };
    const started = Date.now();
    await stackSh('up').catch((error: { stderr?: string }) => {
      throw new Error(
        `private SASL stack: stack.sh up failed:\n${String(error.stderr ?? error).slice(-3000)}`,
      );
    });
    console.info(`kafka-sasl.e2e: private SASL stack up in ${Math.round((Date.now() - started) / 1000)} s`);
    env = readStackEnv(join(stackDir, 'env'));
    await startRegistryProxy();
    pool = new pg.Pool({
      host: need('PDA_PG_HOST'),
      port: Number(need('PDA_PG_PORT')),
      database: need('PDA_PG_DATABASE'),
      user: need('PDA_PG_USER'),
      password: need('PDA_PG_PASSWORD'),
      max: 2,
    });
    await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, 'SASL Snow & Ice', 'EUR')", [
      company,
    ]);
    await pool.query("INSERT INTO sites (id, company_id, name) VALUES ($1, $2, 'Depot yard')", [
      site,
      company,
    ]);
  });

  afterAll(async () => {
    for (const c of children) if (alive(c)) c.kill('SIGKILL');
    await pool?.end();
    proxyServer?.close();
    if (Object.keys(stackVars).length > 0) {
      await stackSh('down --purge').catch((error: { stderr?: string }) => {
        console.error(
          `kafka-sasl.e2e: stack.sh down --purge failed: ${String(error.stderr ?? error).slice(-2000)}`,
        );
      });
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('ingest authenticates (SCRAM-SHA-512) and applies changes made in PostgreSQL; the registry answers it over HTTPS with credentials', async () => {
    const dataDir = join(work, 'data-scram');
    const ingest = startIngest(
      saslSettings(dataDir, 'SCRAM-SHA-512', need('PDA_KAFKA_INGEST_PASSWORD_FILE')),
    );
    await waitFor(
      'the snapshot of the new site applied through SASL_SSL',
      () => siteName(dataDir, company, site) === 'Depot yard',
      {
        timeoutMs: 120_000,
        intervalMs: 250,
      },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\ningest said:\n${ingest.lines.slice(-20).join('\n')}`);
    });
    // A change made while ingest runs: PostgreSQL → Connect (User:connect) → SASL_SSL → ingest.
    await pool?.query("UPDATE sites SET name = 'Depot yard (north gate)', updated_at = now() WHERE id = $1", [
      site,
    ]);
    await waitFor(
      'the update applied',
      () => siteName(dataDir, company, site) === 'Depot yard (north gate)',
      {
        timeoutMs: 60_000,
        intervalMs: 250,
      },
    );
    expect(registryProxy.authorized).toBeGreaterThan(0);
    expect(registryProxy.refused).toBe(0);
    ingest.child.kill('SIGTERM');
    expect(await ingest.exited).toBe(0);
    const password = readFileSync(need('PDA_KAFKA_INGEST_PASSWORD_FILE'), 'utf8').trim();
    expect(ingest.lines.join('\n')).not.toContain(password);
    expect(ingest.lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  });

  it('PLAIN over TLS authenticates the same principal', async () => {
    const dataDir = join(work, 'data-plain');
    const ingest = startIngest(saslSettings(dataDir, 'PLAIN', need('PDA_KAFKA_INGEST_PASSWORD_FILE')));
    await waitFor(
      'the site applied through SASL PLAIN',
      () => siteName(dataDir, company, site) !== undefined,
      {
        timeoutMs: 90_000,
        intervalMs: 250,
      },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\ningest said:\n${ingest.lines.slice(-20).join('\n')}`);
    });
    ingest.child.kill('SIGTERM');
    expect(await ingest.exited).toBe(0);
  });

  it('a wrong password: one line naming the user and the settings, exit 2, no retry', async () => {
    const wrong = join(work, 'wrong.password');
    writeFileSync(wrong, 'not-the-password\n', { mode: 0o600 });
    const started = Date.now();
    const ingest = startIngest(saslSettings(join(work, 'data-wrong'), 'SCRAM-SHA-512', wrong));
    const code = await Promise.race([
      ingest.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000)),
    ]);
    expect(code, ingest.lines.join('\n')).toBe(2);
    expect(Date.now() - started).toBeLessThan(30_000);
    const problems = ingest.lines.filter((l) => !/"level":(10|20|30)\b/.test(l));
    expect(problems).toHaveLength(1);
    expect(JSON.parse(problems[0] as string)).toMatchObject({
      level: 60,
      msg: expect.stringMatching(
        /^Kafka at 127\.0\.0\.1:\d+ refused user 'ingest' \(SASL SCRAM-SHA-512\): .*authentication failed.* check INGEST_KAFKA_SASL_USERNAME, INGEST_KAFKA_SASL_PASSWORD_FILE and INGEST_KAFKA_SASL_MECHANISM; not retried$/,
      ),
    });
    expect(ingest.lines.join('\n')).not.toContain('not-the-password');
  });

  it('the ACLs: nobody but Connect writes the data topics (TopicAuthorizationFailed), ingest included', async () => {
    for (const user of ['other', 'ingest'] as const) {
      const producer = saslClient(user).producer({ retry: { retries: 0 } });
      await producer.connect();
      try {
        for (const table of ['sites', 'api_keys', 'api_key_companies']) {
          const refused = await producer
            .send({ topic: `pda.public.${table}`, messages: [{ key: '{"id":"forged"}', value: '{}' }] })
            .then(
              () => undefined,
              (error: Error & { type?: string; cause?: { type?: string } }) => error,
            );
          expect(refused, `${user} produced to pda.public.${table}`).toBeDefined();
          expect(`${refused?.message} ${refused?.type ?? refused?.cause?.type ?? ''}`).toMatch(
            /Topic authorization failed|TOPIC_AUTHORIZATION_FAILED/,
          );
        }
      } finally {
        await producer.disconnect();
      }
    }
    // The second principal cannot read them either; Connect's principal is the one that writes.
    // Kafka grants DESCRIBE implicitly with READ (and with WRITE), so a principal that had READ on
    // a data topic would see it in the metadata: seeing none of them proves it has no READ.
    const admin = saslClient('other').admin();
    await admin.connect();
    try {
      expect((await admin.listTopics()).filter((t) => t.startsWith('pda.public.'))).toEqual([]);
    } finally {
      await admin.disconnect();
    }
  });
});
