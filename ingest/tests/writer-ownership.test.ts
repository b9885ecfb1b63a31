import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { companyPartition } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { ConfigError, parseConfig } from '../src/config.ts';
import { createDecoder } from '../src/decode/index.ts';
import { fixedAssignment } from '../src/kafka/fixed-assignment.ts';
import {
  checkTenantPartitions,
  foreignCompanyOf,
  OwnershipMismatchError,
  ownsPartition,
  type WriterOwnership,
  writerAssignment,
} from '../src/kafka/writer-ownership.ts';
import { createCompanyRebuilds } from '../src/live-rebuild/company-rebuilds.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { encodeEvent } from '../src/testing/index.ts';
import { tempDataDir } from './support/apply.ts';

const base = { INGEST_KAFKA_BROKERS: '127.0.0.1:59092', INGEST_DATA_DIR: '/tmp/x' };
const FILE = {
  partitions: 4,
  writers: [
    { name: 'a', api: 'http://127.0.0.1:3001', serves: [0, 2] },
    { name: 'b', api: 'http://127.0.0.1:3002', serves: [1, 3], builds: [] },
  ],
};

function ownershipFile(content: unknown = FILE): string {
  const file = `${tempDataDir('ingest-ownership-')}/ownership.json`;
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** A company id whose partition (of 4) is `partition`. */
function companyOn(partition: number, partitions = 4): string {
  for (let i = 0; ; i++) {
    const id = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
    if (companyPartition(id, partitions) === partition) return id;
  }
}

describe('INGEST_OWNERSHIP_FILE and INGEST_WRITER_NAME', () => {
  it('neither: no ownership, today’s behaviour', () => {
    expect(parseConfig(base).ownership).toBeUndefined();
  });

  it('both: the writer’s applied partitions', () => {
    const file = ownershipFile();
    const config = parseConfig({ ...base, INGEST_OWNERSHIP_FILE: file, INGEST_WRITER_NAME: 'b' });
    expect(config.ownership).toEqual({ file, writer: 'b', partitions: 4, applied: [1, 3] });
  });

  it('serves and builds are both applied', () => {
    const file = ownershipFile({
      partitions: 4,
      writers: [
        { name: 'a', api: 'http://a:1', serves: [0, 1, 2, 3] },
        { name: 'c', api: 'http://c:1', serves: [], builds: [3, 1] },
      ],
    });
    expect(
      parseConfig({ ...base, INGEST_OWNERSHIP_FILE: file, INGEST_WRITER_NAME: 'c' }).ownership?.applied,
    ).toEqual([1, 3]);
  });

  it.each([
    [{ INGEST_WRITER_NAME: 'a' }, /set both or neither/],
    [{ INGEST_OWNERSHIP_FILE: '/nonexistent/ownership.json' }, /set both or neither/],
    [{ INGEST_OWNERSHIP_FILE: '/nonexistent/ownership.json', INGEST_WRITER_NAME: 'a' }, /ENOENT/],
    [{ INGEST_WRITER_NAME: 'zz' }, /writer "zz" is not in the ownership file/],
  ])('refuses %j with one line', (settings, message) => {
    const env: Record<string, string> = { ...base, ...settings };
    if (env.INGEST_WRITER_NAME === 'zz') env.INGEST_OWNERSHIP_FILE = ownershipFile();
    let error: unknown;
    try {
      parseConfig(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('refuses a file that is not a valid ownership file', () => {
    const file = ownershipFile(
      '{"partitions": 4, "writers": [{"name": "a", "api": "http://a:1", "serves": [0]}]}',
    );
    expect(() => parseConfig({ ...base, INGEST_OWNERSHIP_FILE: file, INGEST_WRITER_NAME: 'a' })).toThrow(
      /INGEST_OWNERSHIP_FILE: .*no writer serves partition\(s\) 1, 2, 3/,
    );
  });
});

const B: WriterOwnership = { file: 'f', writer: 'b', partitions: 4, applied: [1, 3] };
const SUBSCRIBED = [
  'pda.public.companies',
  'pda.public.api_keys',
  'pda.public.api_key_companies',
  'pda.public.sites',
  'pda.public.equipment',
  '__debezium-heartbeat.pda',
];

describe('the writer’s assignment', () => {
  it('takes its partitions of the tenant topics and every partition of the others', () => {
    expect(writerAssignment(B, 'pda', SUBSCRIBED)).toEqual([
      { topic: 'pda.public.companies' },
      { topic: 'pda.public.api_keys' },
      { topic: 'pda.public.api_key_companies' },
      { topic: 'pda.public.sites', partitions: [1, 3] },
      { topic: 'pda.public.equipment', partitions: [1, 3] },
      { topic: '__debezium-heartbeat.pda' },
    ]);
  });

  it('counts lag only on its partitions', () => {
    const owns = ownsPartition(B, 'pda');
    expect([0, 1, 2, 3].map((p) => owns('pda.public.sites', p))).toEqual([false, true, false, true]);
    expect(owns('pda.public.companies', 0)).toBe(true);
    expect(ownsPartition(undefined, 'pda')('pda.public.sites', 0)).toBe(true);
  });

  const partitionsOf = (topic: string) => (topic.endsWith('sites') ? [0, 1, 2, 3] : [0]);
  const wanted = writerAssignment(B, 'pda', ['pda.public.sites', 'pda.public.companies']);

  it('gives everything to the leader itself, the same at every join, nothing to another member', () => {
    const members = [
      { memberId: 'm-1', token: 'dead-predecessor' },
      { memberId: 'm-2', token: 'me' },
    ];
    const result = fixedAssignment({ members, own: 'me', wanted, partitionsOf });
    expect(Object.fromEntries(result)).toEqual({
      'm-1': {},
      'm-2': { 'pda.public.sites': [1, 3], 'pda.public.companies': [0] },
    });
    // A restart: a new member id, the same partitions.
    const again = fixedAssignment({
      members: [{ memberId: 'm-9', token: 'me2' }],
      own: 'me2',
      wanted,
      partitionsOf,
    });
    expect(again.get('m-9')).toEqual(result.get('m-2'));
  });

  it('takes no partition the topic does not have, and falls back to the first member without a token', () => {
    const result = fixedAssignment({
      members: [{ memberId: 'x', token: undefined }],
      own: 'me',
      wanted: [{ topic: 'pda.public.sites', partitions: [3, 7] }],
      partitionsOf,
    });
    expect(result.get('x')).toEqual({ 'pda.public.sites': [3] });
  });

  it('refuses to start when a tenant topic has another number of partitions than the file', async () => {
    const admin = {
      topicOffsets: async (topic: string) =>
        Array.from({ length: topic.endsWith('.sites') ? 1 : 4 }, (_, partition) => ({
          partition,
          low: '0',
          high: '0',
        })),
    };
    const check = checkTenantPartitions(admin as never, B, 'pda');
    await expect(check).rejects.toBeInstanceOf(OwnershipMismatchError);
    await expect(checkTenantPartitions(admin as never, B, 'pda')).rejects.toThrow(
      /the connector and the ownership file disagree: f says 4 partitions per tenant topic, but pda\.public\.sites has 1/,
    );
  });
});

describe('changes of companies the writer does not own', () => {
  const mine = companyOn(1);
  const theirs = companyOn(2);
  const foreign = foreignCompanyOf(B);
  const site = (company: string) =>
    makeUpsert('sites', sampleRow('sites', { id: companyOn(0), company_id: company }), 5);

  it('are told by the row’s company, or by the key’s for a delete', () => {
    expect(foreign(site(mine))).toBeUndefined();
    expect(foreign(site(theirs))).toBe(theirs);
    expect(foreign(makeDelete('sites', { id: mine, company_id: theirs }, 6))).toBe(theirs);
    expect(foreign(makeDelete('sites', { id: mine, company_id: mine }, 6))).toBeUndefined();
    // A key without the company (unpartitioned connector), control tables: applied.
    expect(foreign(makeDelete('sites', { id: mine }, 6))).toBeUndefined();
    expect(foreign(makeUpsert('companies', sampleRow('companies', { id: theirs }), 7))).toBeUndefined();
  });

  it('are not applied: counted, one warning line per batch, never a crash', async () => {
    const lines: { level: number; msg: string; count?: number }[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const dir = tempDataDir('ingest-foreign-');
    const store = ProjectionStore.open({ dataDir: dir });
    const metrics = createMetrics();
    const pipeline = createPipeline({
      decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
      sink: inProcessSink(store),
      metrics,
      logger: pino({ level: 'info' }, stream),
      foreignCompany: foreign,
    });
    const records = [mine, theirs, theirs, theirs].map((company, i) => {
      const event = encodeEvent(
        {
          table: 'sites',
          op: 'c',
          row: sampleRow('sites', { id: companyOn(i % 4), company_id: company }),
          lsn: 100 + i,
          tsMs: 1,
        },
        { companyKey: true, inlineSchema: true },
      );
      return { topic: event.topic, partition: 1, offset: String(i), key: event.key, value: event.value };
    });
    const summary = await pipeline.process(records);
    expect(summary).toMatchObject({ applied: 1, ignored: 3 });
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ count: 3 });
    expect(await metrics.registry.getSingleMetricAsString('pda_ingest_not_owned_total')).toContain(
      'pda_ingest_not_owned_total{table="sites"} 3',
    );
    store.close();
  });
});

describe('a company rebuild on a split writer', () => {
  it('is refused (400) for a company of another writer’s partition, before anything starts', () => {
    const file = ownershipFile();
    const config = parseConfig({ ...base, INGEST_OWNERSHIP_FILE: file, INGEST_WRITER_NAME: 'b' });
    const rebuilds = createCompanyRebuilds(
      config,
      { logger: pino({ level: 'silent' }), avscTypes: () => undefined },
      {} as never,
      () => undefined,
    );
    expect(rebuilds.request(companyOn(2))).toMatchObject({
      status: 400,
      error: expect.stringContaining('is not writer "b"\'s: its partition 2'),
    });
    // Its own company passes this check (and meets the next one: not consuming yet).
    expect(rebuilds.request(companyOn(3))).toMatchObject({ status: 409 });
  });
});
