import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { companyPartition, listCompanyFiles } from '@pda/projections/model';
import { openControlReader } from '@pda/projections/read';
import { freePort, makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { describe, expect, it } from 'vitest';
import { unownedCompanyFiles } from '../src/kafka/writer-ownership.ts';
import { tempDataDir } from './support/apply.ts';

// A split writer whose ownership shrank: the files of the companies it gave away are counted
// (unownedCompanyFiles: the start warning and pda_ingest_companies_not_owned) and removed by
// `remove-unowned`, which refuses a company the file still assigns to the writer, and a running writer.

function run(args: string[], env: Record<string, string>) {
  const path = fileURLToPath(new URL('../src/remove-unowned-main.ts', import.meta.url));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [path, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }),
    );
  });
}

/** Company ids on each of 4 partitions. */
function companiesByPartition(): string[] {
  const found: string[] = [];
  for (let i = 0; found.filter(Boolean).length < 4; i++) {
    const id = `${i.toString(16).padStart(8, '0')}-0000-4000-8000-00000000000a`;
    const p = companyPartition(id, 4);
    if (found[p] === undefined) found[p] = id;
  }
  return found;
}

describe('remove-unowned', () => {
  it('counts and removes the files of companies the writer no longer applies, and only those', async () => {
    const dataDir = tempDataDir('ingest-unowned-');
    const ids = companiesByPartition();
    // Built while the writer applied every partition.
    const store = ProjectionStore.open({ dataDir });
    store.applyBatch(
      ids.map((id, i) =>
        makeUpsert('sites', sampleRow('sites', { id: ids[(i + 1) % 4] as string, company_id: id }), 10 + i),
      ),
    );
    store.close();
    expect(listCompanyFiles(dataDir).sort()).toEqual([...ids].sort());

    // The ownership file now gives partitions 1 and 3 to "b".
    const file = join(dataDir, '..', `ownership-${Date.now()}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        partitions: 4,
        writers: [
          { name: 'a', api: 'http://a:1', serves: [0, 2] },
          { name: 'b', api: 'http://b:1', serves: [1, 3] },
        ],
      }),
    );
    const ownership = { file, writer: 'a', partitions: 4, applied: [0, 2] };
    const gone = [ids[1], ids[3]] as string[];
    expect(unownedCompanyFiles(dataDir, ownership).sort()).toEqual([...gone].sort());

    const port = await freePort();
    const env = {
      INGEST_KAFKA_BROKERS: '127.0.0.1:1',
      INGEST_DATA_DIR: dataDir,
      INGEST_OWNERSHIP_FILE: file,
      INGEST_WRITER_NAME: 'a',
      INGEST_ADMIN_PORT: String(port),
    };
    const refused = await run(['--company', ids[0] as string], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refused: .* still assigns company .* \(partition 0\) to writer "a"/);

    const dry = await run(['--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ removed: expect.arrayContaining(gone), dryRun: true });
    expect(listCompanyFiles(dataDir)).toHaveLength(4);

    // A writer answering on the admin port: refused.
    const server = createServer((_, res) => res.end('{"status":"ok"}'));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const busy = await run([], env);
    await new Promise((resolve) => server.close(resolve));
    expect(busy.code).toBe(2);
    expect(busy.stderr).toMatch(/refused: an ingest answers on 127\.0\.0\.1:\d+; stop writer "a" first/);

    const done = await run([], env);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout).removed.sort()).toEqual([...gone].sort());
    expect(listCompanyFiles(dataDir).sort()).toEqual([ids[0], ids[2]].sort());
    for (const id of gone) expect(existsSync(join(dataDir, 'companies', `${id}.sqlite-wal`))).toBe(false);
    const control = openControlReader(dataDir);
    const known = control.prepare('SELECT company_id FROM company_files').pluck().all();
    control.close();
    for (const id of gone) expect(known).not.toContain(id);
    expect(unownedCompanyFiles(dataDir, ownership)).toEqual([]);
  });
});
