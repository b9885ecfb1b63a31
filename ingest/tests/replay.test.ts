import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { replayFile } from '../src/replay/replay.ts';
import { encodeEvent, sampleRow, uuidFor } from '../src/testing/index.ts';
import { tempDataDir } from './support/apply.ts';
import { dumpDataDir, rowsOf } from './support/dump.ts';
import { AVRO_FIXTURE_DIR, FIXTURE_FILE, fixtureRecords } from './support/fixtures.ts';

const options = (file: string, dataDir: string) => ({
  file,
  dataDir,
  topicPrefix: 'pda',
  bareDecimalMode: 'precise' as const,
  batchSize: 7,
  avscTypes: () => undefined,
  logger: pino({ level: 'silent' }),
});

describe('replay from a JSONL file', () => {
  it('applies text and object records, keeps bad lines as dead letters, and is idempotent', async () => {
    const dir = tempDataDir('replay-');
    const company = uuidFor(3, 3);
    const a = encodeEvent(
      { table: 'companies', op: 'c', row: sampleRow('companies', 1, company), lsn: 10, tsMs: 1 },
      { inlineSchema: true },
    );
    const b = encodeEvent(
      { table: 'services', op: 'c', row: sampleRow('services', 2, company), lsn: 11, tsMs: 1 },
      { inlineSchema: true },
    );
    const file = join(dir, 'events.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({
          topic: a.topic,
          partition: 0,
          offset: 0,
          key: JSON.parse(a.key),
          value: JSON.parse(a.value),
        }),
        '',
        JSON.stringify({ topic: b.topic, partition: 0, offset: '1', key: b.key, value: b.value }),
        'not json',
        JSON.stringify({ topic: b.topic, partition: 0, offset: 2, key: b.key, value: null }),
      ].join('\n'),
    );
    const data = join(dir, 'data');
    const first = await replayFile(options(file, data));
    // The tombstone has no `d` before it (as after compaction): it deletes the service
    // (src/decode/partition-positions.ts).
    expect(first).toMatchObject({ events: 4, applied: 3, deadLettered: 1, ignored: 0 });
    expect(rowsOf(data, company, 'services')).toHaveLength(0);
    expect(rowsOf(data, company, 'tombstones')).toHaveLength(1);
    const dump = dumpDataDir(data);
    const second = await replayFile(options(file, data));
    expect(second).toMatchObject({ applied: 0, skipped: 3 });
    expect(dumpDataDir(data)).toEqual(dump);
  });

  it('replays the real captured fixture without dead letters', async () => {
    const records = fixtureRecords();
    const totals = await replayFile(options(FIXTURE_FILE, tempDataDir('replay-fixture-')));
    expect(totals.events).toBe(records.length);
    expect(totals.deadLettered).toBe(0);
    expect(totals.applied).toBeGreaterThan(20);
  });
});

/** A schema registry's `GET /schemas/ids/<id>` over the Avro fixture's writer schemas (a real HTTP server). */
async function fixtureRegistry(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const schemas = JSON.parse(readFileSync(join(AVRO_FIXTURE_DIR, 'schemas.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const id = /^\/schemas\/ids\/(\d+)$/.exec(req.url ?? '')?.[1];
    const schema = id === undefined ? undefined : schemas[id];
    res.writeHead(schema ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(schema ? { schema: JSON.stringify(schema) } : { error_code: 40403 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('replay of Avro lines (schema-registry wire format)', () => {
  const avroFile = join(AVRO_FIXTURE_DIR, 'events.jsonl');
  const strip = (dump: ReturnType<typeof dumpDataDir>) =>
    JSON.parse(JSON.stringify(dump).replace(/"(lsn|source_lsn|position_lsn|created_at_ms)":\d+/g, '"$1":0'));

  it('with --schema-registry-url: the same projection as the JSON twin, each schema fetched once', async () => {
    const registry = await fixtureRegistry();
    try {
      const fromAvro = tempDataDir('replay-avro-');
      const avro = await replayFile({ ...options(avroFile, fromAvro), schemaRegistryUrl: registry.url });
      const fromJson = tempDataDir('replay-json-');
      const json = await replayFile(options(FIXTURE_FILE, fromJson));
      expect(avro.deadLettered).toBe(0);
      expect(avro).toEqual(json);
      expect(strip(dumpDataDir(fromAvro))).toEqual(strip(dumpDataDir(fromJson)));
      expect(new Set(registry.requests).size).toBe(registry.requests.length);
    } finally {
      await registry.close();
    }
  });

  it('without a registry: stops at the first Avro line, naming it and the option', async () => {
    await expect(replayFile(options(avroFile, tempDataDir('replay-avro-none-')))).rejects.toThrow(
      /events\.jsonl line 1 \(pda\.public\.\w+\) is Avro \(writer schema \d+\): pass --schema-registry-url/,
    );
  });

  it('a registry that does not answer: stops with the reason after the timeout', async () => {
    const registry = await fixtureRegistry();
    await registry.close(); // its port now refuses connections
    const data = tempDataDir('replay-avro-down-');
    await expect(
      replayFile({
        ...options(avroFile, data),
        schemaRegistryUrl: registry.url,
        schemaRegistryTimeoutMs: 1500,
      }),
    ).rejects.toThrow(
      /writer schema \d+ not fetched from http:\/\/127\.0\.0\.1:\d+ within 1500 ms: .*unreachable/,
    );
  });
});
