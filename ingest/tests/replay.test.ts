import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { replayFile } from '../src/replay/replay.ts';
import { encodeEvent, sampleRow, uuidFor } from '../src/testing/index.ts';
import { tempDataDir } from './support/apply.ts';
import { dumpDataDir, rowsOf } from './support/dump.ts';
import { FIXTURE_FILE, fixtureRecords } from './support/fixtures.ts';

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
