// Writers split by company (issue 28; ingest/README.md, "Writers split by company") on the real
// Kafka: private topics, the tenant ones with 4 partitions, filled with Debezium-shaped events on
// each company's partition (companyPartition, the connector's PartitionRouting) and keyed by
// (id, company_id) as the partitioned connector keys them. Two ingest processes, writers "a"
// (partitions 0, 2) and "b" (1, 3), each with its own data directory and consumer group:
// - each holds exactly its companies (every company row, files only for its own);
// - a row moved from a company of a to one of b (the `d` keyed with the old company on its
//   partition, the `c` keyed with the new one on the other, same lsn) ends only in b, and in a's
//   deletions;
// - b killed with SIGKILL mid-load and restarted loses nothing, and its assignment does not move;
// - then one writer with every partition handles move pairs arriving in both orders.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import { companyPartition, SOURCE_TABLES, type SourceTable, TENANT_TABLES } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import { freePort } from '@pda/projections/testing';
import { AssignerProtocol, type Kafka, Partitioners } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteTopics } from './src/produce-events.ts';
import { kafkaClient, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

const PARTITIONS = 4;
const prefix = `writers${Date.now()}`;
const topic = (table: SourceTable) => `${prefix}.public.${table}`;
const heartbeat = `__debezium-heartbeat.${prefix}`;
const TENANT = new Set<string>(TENANT_TABLES);
const ALL_TOPICS = [...SOURCE_TABLES.map(topic), heartbeat];

/** Companies by partition: two on each, so each writer has four. */
const companies: string[][] = Array.from({ length: PARTITIONS }, () => []);
for (let n = 0; companies.some((list) => list.length < 2); n++) {
  const id = uuidFor(n, 4242);
  const list = companies[companyPartition(id, PARTITIONS)] as string[];
  if (list.length < 2) list.push(id);
}
const onPartition = (p: number, i = 0) => companies[p]?.[i] as string;
const ALL_COMPANIES = companies.flat();
const OF_A = [0, 2].flatMap((p) => companies[p] ?? []);
const OF_B = [1, 3].flatMap((p) => companies[p] ?? []);

interface Produced {
  readonly topic: string;
  readonly partition: number;
  readonly key: string;
  readonly value: string;
}

let lsn = 10_000;
let rowNumber = 0;
const tsMs = () => Date.now();

function companyEvent(id: string): Produced {
  const event = encodeEvent(
    { table: 'companies', op: 'r', row: sampleRow('companies', rowNumber++, id), lsn: lsn++, tsMs: tsMs() },
    { topicPrefix: prefix, inlineSchema: true },
  );
  return { ...event, partition: 0 };
}

/** A tenant event on its company's partition, keyed (id, company_id). */
function tenantEvent(
  table: SourceTable,
  op: 'c' | 'u' | 'd',
  row: Record<string, unknown>,
  at = lsn++,
): Produced {
  const event = encodeEvent(
    { table, op, row, lsn: at, tsMs: tsMs() },
    { topicPrefix: prefix, inlineSchema: true, companyKey: true },
  );
  return { ...event, partition: companyPartition(row.company_id as string, PARTITIONS) };
}

/** `count` new sites per company; their ids per company. */
function sites(
  companyIds: readonly string[],
  count: number,
): { events: Produced[]; ids: Map<string, string[]> } {
  const events: Produced[] = [];
  const ids = new Map<string, string[]>(companyIds.map((c) => [c, []]));
  for (let i = 0; i < count; i++) {
    for (const company of companyIds) {
      const row = sampleRow('sites', rowNumber++, company);
      ids.get(company)?.push(row.id as string);
      events.push(tenantEvent('sites', 'c', row));
    }
  }
  return { events, ids };
}

/** The d + c pair of an UPDATE moving `row` to `to`: both at the same lsn, each on its company's partition. */
function movePair(row: Record<string, unknown>, to: string, name: string) {
  const at = lsn++;
  const from = row.company_id as string;
  const d = tenantEvent('sites', 'd', { ...row, company_id: from }, at);
  const moved = { ...row, company_id: to, name };
  const c = tenantEvent('sites', 'c', moved, at);
  return { d, c, moved };
}

async function produce(kafka: Kafka, events: readonly Produced[]): Promise<void> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    for (let i = 0; i < events.length; i += 100) {
      const byTopic = new Map<string, { key: string; value: string; partition: number }[]>();
      for (const { topic: t, key, value, partition } of events.slice(i, i + 100)) {
        const list = byTopic.get(t) ?? [];
        list.push({ key, value, partition });
        byTopic.set(t, list);
      }
      await producer.sendBatch({
        topicMessages: [...byTopic].map(([t, messages]) => ({ topic: t, messages })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

function read<T>(dataDir: string, company: string, sql: string): T[] {
  const db = openCompanyReader(dataDir, company);
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}
const siteIds = (dataDir: string, company: string): Set<string> =>
  existsSync(join(dataDir, 'companies', `${company}.sqlite`))
    ? new Set(read<{ id: string }>(dataDir, company, 'SELECT id FROM sites').map((r) => r.id))
    : new Set();
const site = (dataDir: string, company: string, id: string) =>
  existsSync(join(dataDir, 'companies', `${company}.sqlite`))
    ? read<{ id: string; name: string; _src_lsn: number }>(
        dataDir,
        company,
        `SELECT id, name, _src_lsn FROM sites WHERE id = '${id}'`,
      )[0]
    : undefined;
const tombstone = (dataDir: string, company: string, id: string) =>
  existsSync(join(dataDir, 'companies', `${company}.sqlite`))
    ? read<{ _src_lsn: number }>(
        dataDir,
        company,
        `SELECT _src_lsn FROM tombstones WHERE table_name = 'sites' AND id = '${id}'`,
      )[0]?._src_lsn
    : undefined;
const companyFiles = (dataDir: string) =>
  existsSync(join(dataDir, 'companies'))
    ? readdirSync(join(dataDir, 'companies'))
        .filter((f) => f.endsWith('.sqlite'))
        .map((f) => f.slice(0, -'.sqlite'.length))
        .sort()
    : [];

interface Writer {
  readonly name: string;
  readonly dataDir: string;
  readonly groupId: string;
  child?: ChildProcess;
  output: string;
  adminPort?: number;
}

const alive = (child: ChildProcess | undefined) =>
  child !== undefined && child.exitCode === null && child.signalCode === null;

function writerEnv(writer: Writer, ownershipFile: string, adminPort = '0'): NodeJS.ProcessEnv {
  return {
    ...process.env,
    INGEST_KAFKA_BROKERS: stackEnv().kafkaBrokers.join(','),
    INGEST_TOPIC_PREFIX: prefix,
    INGEST_GROUP_ID: writer.groupId,
    INGEST_DATA_DIR: writer.dataDir,
    INGEST_ADMIN_PORT: adminPort,
    INGEST_READY_MAX_LAG: '0',
    INGEST_MAX_BATCH_EVENTS: '200',
    INGEST_OWNERSHIP_FILE: ownershipFile,
    INGEST_WRITER_NAME: writer.name,
    INGEST_LOG_LEVEL: 'info',
  };
}

/** A command of the ingest package (rebuild, remove-unowned) as a process; its exit code and output. */
function runIngestCommand(script: string, args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, 'ingest/src', script), ...args],
      { env, cwd: join(repoRoot, 'ingest'), timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }),
    );
  });
}

function startWriter(writer: Writer, ownershipFile: string): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, 'ingest/src/main.ts')],
    {
      env: writerEnv(writer, ownershipFile),
      cwd: join(repoRoot, 'ingest'),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  writer.child = child;
  return new Promise((resolve, reject) => {
    let pending = '';
    const keep = (chunk: Buffer) => {
      writer.output = (writer.output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stderr?.on('data', keep);
    child.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const port = /"adminPort":(\d+)/.exec(line)?.[1];
        if (port) {
          writer.adminPort = Number(port);
          resolve(Number(port));
        }
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`writer ${writer.name} exited (${code}):\n${writer.output}`)),
    );
  });
}

async function readyz(writer: Writer): Promise<{ status: number; body: { lag: number } }> {
  const response = await fetch(`http://127.0.0.1:${writer.adminPort}/readyz`);
  return { status: response.status, body: (await response.json()) as { lag: number } };
}

/** The tenant partitions each member of a group was given, by topic. */
async function groupAssignment(kafka: Kafka, groupId: string): Promise<Record<string, number[]>[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return (groups[0]?.members ?? []).map(
      (m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment ?? {},
    );
  } finally {
    await admin.disconnect();
  }
}

function writeOwnership(dir: string, writers: { name: string; serves: number[] }[]): string {
  const file = join(dir, 'ownership.json');
  writeFileSync(
    file,
    JSON.stringify({
      partitions: PARTITIONS,
      writers: writers.map((w, i) => ({ ...w, api: `http://127.0.0.1:${3100 + i}` })),
    }),
  );
  return file;
}

describe('writers split by company on 4 partitions', () => {
  const root = mkdtempSync(join(tmpdir(), 'ingest-e2e-writers-'));
  const newWriter = (name: string): Writer => ({
    name,
    dataDir: join(root, `data-${name}-${randomUUID().slice(0, 8)}`),
    groupId: `e2e-writers-${name}-${randomUUID()}`,
    output: '',
  });
  const a = newWriter('a');
  const b = newWriter('b');
  const both = newWriter('all');
  const writers = [a, b, both];
  let kafka: Kafka;
  const ownership = writeOwnership(root, [
    { name: 'a', serves: [0, 2] },
    { name: 'b', serves: [1, 3] },
  ]);

  afterAll(async () => {
    for (const w of writers) if (alive(w.child)) w.child?.kill('SIGKILL');
    await deleteTopics(kafka, ALL_TOPICS);
  });

  const expected = new Map<string, Set<string>>(ALL_COMPANIES.map((c) => [c, new Set()]));
  const add = (ids: Map<string, string[]>) => {
    for (const [company, list] of ids) for (const id of list) expected.get(company)?.add(id);
  };
  const holdsExactly = (writer: Writer, owned: readonly string[]) => {
    for (const company of ALL_COMPANIES) {
      const held = siteIds(writer.dataDir, company);
      const want = owned.includes(company) ? (expected.get(company) as Set<string>) : new Set<string>();
      if (held.size !== want.size || [...want].some((id) => !held.has(id))) return false;
    }
    return true;
  };

  let movedRow: Record<string, unknown>;

  it('each writer applies exactly its companies; a move from a to b ends only in b', async () => {
    const env = stackEnv();
    kafka = kafkaClient('pda-writers-e2e', env);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: ALL_TOPICS.map((t) => ({
        topic: t,
        numPartitions: TENANT.has(t.split('.').at(-1) as string) && t !== heartbeat ? PARTITIONS : 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      })),
      waitForLeaders: true,
    });
    await admin.disconnect();

    const first = sites(ALL_COMPANIES, 150);
    add(first.ids);
    await produce(kafka, [...ALL_COMPANIES.map(companyEvent), ...first.events]);

    await Promise.all([startWriter(a, ownership), startWriter(b, ownership)]);
    await waitFor(
      'each writer holds exactly its companies',
      () => holdsExactly(a, OF_A) && holdsExactly(b, OF_B),
      {
        timeoutMs: 90_000,
      },
    );
    // Every company row in control.sqlite, company files only for its own.
    expect(companyFiles(a.dataDir)).toEqual([...OF_A].sort());
    expect(companyFiles(b.dataDir)).toEqual([...OF_B].sort());
    // Lag and readiness count only the writer's partitions (INGEST_READY_MAX_LAG=0).
    for (const w of [a, b]) {
      const ready = await waitFor(`${w.name} ready`, async () => {
        const r = await readyz(w);
        return r.status === 200 && r;
      });
      expect(ready.body.lag).toBe(0);
    }
    // The group's assignment: its tenant partitions, all of the control topics.
    // Nothing of another writer's partitions ever reached them (the filter behind it counted none).
    for (const w of [a, b]) {
      const metrics = await (await fetch(`http://127.0.0.1:${w.adminPort}/metrics`)).text();
      // The counter exists (a renamed one would make the next line pass for nothing) and counted none.
      expect(metrics).toMatch(/^# TYPE pda_ingest_not_owned_total counter$/m);
      expect(metrics).not.toMatch(/^pda_ingest_not_owned_total\{[^}]*\} [1-9]/m);
    }
    const [assignmentA] = await groupAssignment(kafka, a.groupId);
    expect(assignmentA?.[topic('sites')]).toEqual([0, 2]);
    expect(assignmentA?.[topic('companies')]).toEqual([0]);

    // A row of a's company on partition 0 moves to b's company on partition 1.
    const from = onPartition(0);
    const to = onPartition(1);
    const id = [...(expected.get(from) as Set<string>)][0] as string;
    movedRow = { ...sampleRow('sites', 0, from), id };
    const pair = movePair(movedRow, to, 'Moved to b');
    await produce(kafka, [pair.d, pair.c]);
    expected.get(from)?.delete(id);
    expected.get(to)?.add(id);
    await waitFor('the move reached both writers', () => holdsExactly(a, OF_A) && holdsExactly(b, OF_B));
    expect(site(b.dataDir, to, id)).toMatchObject({ name: 'Moved to b' });
    expect(site(a.dataDir, from, id)).toBeUndefined();
    expect(tombstone(a.dataDir, from, id)).toBeDefined();
    expect(site(a.dataDir, to, id)).toBeUndefined();
    movedRow = pair.moved;
  }, 180_000);

  it('writer b killed with SIGKILL mid-load and restarted loses nothing; its assignment does not move', async () => {
    const load = sites(ALL_COMPANIES, 1500);
    add(load.ids);
    const producing = produce(kafka, load.events);
    // Kill b once it has applied part of the load.
    const before = OF_B.reduce((n, c) => n + siteIds(b.dataDir, c).size, 0);
    await waitFor(
      'b applying the load',
      () => OF_B.reduce((n, c) => n + siteIds(b.dataDir, c).size, 0) > before + 300,
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    b.child?.kill('SIGKILL');
    await new Promise((resolve) => b.child?.once('exit', resolve));
    await producing;
    b.output = '';
    await startWriter(b, ownership);
    await waitFor('both writers hold everything', () => holdsExactly(a, OF_A) && holdsExactly(b, OF_B), {
      timeoutMs: 120_000,
    });
    // The restart removed its dead predecessor from the group: no wait for its session timeout
    // (its data directory did not exist before its first batch: predecessor.ts recordMember).
    expect(b.output).toContain('removed the previous worker from the consumer group');
    const members = await groupAssignment(kafka, b.groupId);
    expect(members).toHaveLength(1);
    expect(members[0]?.[topic('sites')]).toEqual([1, 3]);
    expect(members[0]?.[topic('api_keys')]).toEqual([0]);
    expect(companyFiles(b.dataDir)).toEqual([...OF_B].sort());
    expect(alive(a.child)).toBe(true);
  }, 240_000);

  it('one writer with every partition: move pairs in both orders end in the new company only', async () => {
    for (const w of [a, b]) w.child?.kill('SIGTERM');
    // Its own ownership file: one writer serving every partition.
    const singleFile = join(root, 'ownership-all.json');
    writeFileSync(
      singleFile,
      JSON.stringify({
        partitions: PARTITIONS,
        writers: [{ name: 'all', api: 'http://127.0.0.1:3100', serves: [0, 1, 2, 3] }],
      }),
    );
    await startWriter(both, singleFile);
    await waitFor('the single writer holds everything', () => holdsExactly(both, ALL_COMPANIES), {
      timeoutMs: 120_000,
    });
    // The first move (replayed from the topics, both partitions applied concurrently) ended in b's company.
    const firstId = movedRow.id as string;
    expect(site(both.dataDir, movedRow.company_id as string, firstId)).toMatchObject({ name: 'Moved to b' });
    expect(site(both.dataDir, onPartition(0), firstId)).toBeUndefined();

    // d first, then c: partition 2 → partition 3.
    const from1 = onPartition(2);
    const to1 = onPartition(3);
    const id1 = [...(expected.get(from1) as Set<string>)][0] as string;
    const pair1 = movePair({ ...sampleRow('sites', 1, from1), id: id1 }, to1, 'd then c');
    await produce(kafka, [pair1.d]);
    await waitFor('the d applied', () => tombstone(both.dataDir, from1, id1) !== undefined);
    expect(site(both.dataDir, from1, id1)).toBeUndefined();
    await produce(kafka, [pair1.c]);
    await waitFor('the c applied', () => site(both.dataDir, to1, id1)?.name === 'd then c');

    // c first, then d: partition 3 → partition 0.
    const from2 = onPartition(3, 1);
    const to2 = onPartition(0, 1);
    const id2 = [...(expected.get(from2) as Set<string>)][0] as string;
    const pair2 = movePair({ ...sampleRow('sites', 2, from2), id: id2 }, to2, 'c then d');
    await produce(kafka, [pair2.c]);
    await waitFor('the c applied', () => site(both.dataDir, to2, id2)?.name === 'c then d');
    expect(tombstone(both.dataDir, from2, id2)).toBeDefined();
    await produce(kafka, [pair2.d]);
    await waitFor('the d applied (caught up)', async () => {
      const r = await readyz(both);
      return r.status === 200 && r.body.lag === 0;
    });
    expected.get(from1)?.delete(id1);
    expected.get(to1)?.add(id1);
    expected.get(from2)?.delete(id2);
    expected.get(to2)?.add(id2);
    for (const [id, from, to, name] of [
      [id1, from1, to1, 'd then c'],
      [id2, from2, to2, 'c then d'],
    ] as const) {
      expect(site(both.dataDir, to, id)).toMatchObject({ name });
      expect(site(both.dataDir, from, id)).toBeUndefined();
      expect(tombstone(both.dataDir, from, id)).toBeDefined();
      expect(tombstone(both.dataDir, to, id)).toBeUndefined();
    }
    expect(holdsExactly(both, ALL_COMPANIES)).toBe(true);
    expect(companyFiles(both.dataDir)).toEqual([...ALL_COMPANIES].sort());
  }, 240_000);

  it("writer a's rebuild reads only its partitions; after its ownership shrank, its old companies are counted and removed", async () => {
    // `rebuild` of writer a (stopped above): a new generation from the earliest offsets of its partitions.
    const rebuilt = await runIngestCommand('rebuild-main.ts', ['--adopt-directory'], writerEnv(a, ownership));
    expect(rebuilt.code, rebuilt.stderr.slice(-3000)).toBe(0);
    // Its result line (the logs share stdout).
    const resultLine = rebuilt.stdout.split('\n').find((line) => line.startsWith('{"generation"'));
    const generation = JSON.parse(resultLine ?? 'null') as { dir: string; groupId: string };
    expect(realpathSync(a.dataDir)).toBe(realpathSync(generation.dir));
    expect(holdsExactly(a, OF_A)).toBe(true);
    expect(companyFiles(a.dataDir)).toEqual([...OF_A].sort());
    const admin = kafka.admin();
    await admin.connect();
    const committed = await admin.fetchOffsets({ groupId: generation.groupId, topics: [topic('sites')] });
    await admin.disconnect();
    const read = (committed[0]?.partitions ?? [])
      .filter((p) => Number(p.offset) >= 0)
      .map((p) => p.partition);
    expect(read.sort()).toEqual([0, 2]);

    // Partition 2 goes to b: a no longer applies the companies on it.
    const shrunk = join(root, 'ownership-shrunk.json');
    writeFileSync(
      shrunk,
      JSON.stringify({
        partitions: PARTITIONS,
        writers: [
          { name: 'a', api: 'http://127.0.0.1:3100', serves: [0] },
          { name: 'b', api: 'http://127.0.0.1:3101', serves: [1, 2, 3] },
        ],
      }),
    );
    a.output = '';
    await startWriter(a, shrunk);
    await waitFor('the warning at start', () => /no longer applies/.test(a.output));
    const warnings = a.output.split('\n').filter((line) => line.includes('no longer applies'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] as string)).toMatchObject({ count: 2, writer: 'a' });
    const metrics = await (await fetch(`http://127.0.0.1:${a.adminPort}/metrics`)).text();
    expect(metrics).toMatch(/^pda_ingest_companies_not_owned 2$/m);
    const stopped = new Promise((resolve) => a.child?.once('exit', resolve));
    a.child?.kill('SIGTERM');
    await stopped;

    const env = writerEnv(a, shrunk, String(await freePort()));
    const refused = await runIngestCommand('remove-unowned-main.ts', ['--company', onPartition(0)], env);
    expect(refused.code).toBe(2);
    const removed = await runIngestCommand('remove-unowned-main.ts', [], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout).removed.sort()).toEqual([...(companies[2] ?? [])].sort());
    expect(companyFiles(a.dataDir)).toEqual([...(companies[0] ?? [])].sort());

    // A file that says 8 partitions against topics of 4: refused at start, one line, exit 2.
    const eight = join(root, 'ownership-eight.json');
    writeFileSync(
      eight,
      JSON.stringify({
        partitions: 8,
        writers: [{ name: 'a', api: 'http://127.0.0.1:3100', serves: [0, 1, 2, 3, 4, 5, 6, 7] }],
      }),
    );
    const mismatch = await runIngestCommand('main.ts', [], writerEnv(a, eight));
    expect(mismatch.code).toBe(2);
    const fatal = mismatch.stdout.split('\n').filter((line) => line.includes('"level":60'));
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toContain('the connector and the ownership file disagree');
  }, 240_000);
});
