/**
 * What one company projection file costs a process (docs/operations.md#sizing-a-node): descriptors,
 * memory and disk while the writer (ingest) or a reader (api) holds it open, its disk once closed,
 * and how long opening and closing take. Not a test; prints one JSON document.
 *
 *   pnpm --filter @pda/bench exec node tenants/company-file-costs.ts [--files 2000] [--sites 3]
 *
 * N small tenants (a few sites each, one commit per site per company, as a live stream makes them)
 * are written through ProjectionStore, the ingest's writer, keeping every file open; then, in a
 * fresh process, the same files are opened as the api opens them, each running a page query. Each
 * side runs in a process of its own (this script again, `--role`), so memory freed by one is not
 * reused by the other. Memory is the growth of resident memory outside the JS heap (RSS − V8's
 * heap, after a GC: what SQLite holds) over the open files, divided by N; descriptors are counted
 * in /proc/self/fd.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openCompanyReader, ReadHandle } from '@pda/projections/read';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { openCompanyWriter, ProjectionStore } from '@pda/projections/write';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    sites: { type: 'string', default: '3' },
    role: { type: 'string', default: 'main' },
    'data-dir': { type: 'string' },
  },
});
const files = Number(values.files);
const sites = Number(values.sites);
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const descriptors = () => readdirSync('/proc/self/fd').length;
const nativeKiB = () => {
  gc();
  const { rss, heapTotal } = process.memoryUsage();
  return (rss - heapTotal) / 1024;
};
const perFile = (x: number) => Math.round((x / files) * 1000) / 1000;

function disk(dataDir: string): { sqlite: number; wal: number; shm: number } {
  const dir = join(dataDir, 'companies');
  const bytes = { sqlite: 0, wal: 0, shm: 0 };
  for (const name of readdirSync(dir)) {
    const size = statSync(join(dir, name)).size;
    if (name.endsWith('-wal')) bytes.wal += size;
    else if (name.endsWith('-shm')) bytes.shm += size;
    else bytes.sqlite += size;
  }
  return {
    sqlite: perFile(bytes.sqlite / 1024),
    wal: perFile(bytes.wal / 1024),
    shm: perFile(bytes.shm / 1024),
  };
}

/** Writes the tenants through the writer, every file open; then closes them (checkpoints). */
function writerSide(dataDir: string) {
  let lsn = 1;
  const store = ProjectionStore.open({ dataDir, maxOpenCompanies: files + 10 });
  // After control.sqlite is open, before any company file is (a company's row creates its file).
  const base = { native: nativeKiB(), fds: descriptors() };
  store.applyBatch(
    Array.from({ length: files }, (_, c) =>
      makeUpsert('companies', sampleRow('companies', { id: uuid(c + 1) }), lsn++),
    ),
  );
  for (let s = 0; s < sites; s++) {
    store.applyBatch(
      Array.from({ length: files }, (_, c) =>
        makeUpsert(
          'sites',
          sampleRow('sites', { id: uuid(10_000_000 + s * files + c), company_id: uuid(c + 1) }),
          lsn++,
        ),
      ),
    );
  }
  const open = { native: nativeKiB(), fds: descriptors(), disk: disk(dataDir) };
  const closeStarted = performance.now();
  store.close();
  const closeMs = performance.now() - closeStarted;
  const reopenStarted = performance.now();
  for (let c = 1; c <= files; c++) openCompanyWriter(dataDir, uuid(c)).close();
  // Each iteration is an open and a close of an already checkpointed file.
  const reopenMs = performance.now() - reopenStarted;
  return {
    descriptorsPerFile: perFile(open.fds - base.fds),
    nativeKiBPerFile: perFile(open.native - base.native),
    diskKiBPerOpenFile: open.disk,
    closeMsPerFile: perFile(closeMs),
    openAndCloseMsPerFile: perFile(reopenMs),
    closedFileKiB: disk(dataDir),
  };
}

/** Opens every file as the api does and runs a page query on each. */
function readerSide(dataDir: string) {
  const base = { native: nativeKiB(), fds: descriptors() };
  const openStarted = performance.now();
  const handles = Array.from(
    { length: files },
    (_, c) => new ReadHandle(openCompanyReader(dataDir, uuid(c + 1))),
  );
  const openMs = performance.now() - openStarted;
  for (const handle of handles) {
    handle.statement('page', () => 'SELECT "_json" FROM sites ORDER BY id LIMIT 6', { raw: true }).all();
  }
  const open = { native: nativeKiB(), fds: descriptors() };
  const closeStarted = performance.now();
  for (const handle of handles) handle.close();
  return {
    descriptorsPerFile: perFile(open.fds - base.fds),
    nativeKiBPerFile: perFile(open.native - base.native),
    openMsPerFile: perFile(openMs),
    closeMsPerFile: perFile(performance.now() - closeStarted),
  };
}

function runRole(role: 'writer' | 'reader', dataDir: string): unknown {
  const script = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', script, '--role', role, '--data-dir', dataDir, '--files', String(files)];
  const output = execFileSync(process.execPath, [...args, '--sites', String(sites)], { encoding: 'utf8' });
  return JSON.parse(output);
}

if (values.role === 'writer' || values.role === 'reader') {
  const dataDir = values['data-dir'];
  if (!dataDir) throw new Error('--data-dir is required with --role');
  console.log(JSON.stringify(values.role === 'writer' ? writerSide(dataDir) : readerSide(dataDir)));
} else {
  const dataDir = mkdtempSync(join(tmpdir(), 'pda-file-costs-'));
  try {
    const writer = runRole('writer', dataDir);
    const reader = runRole('reader', dataDir);
    const machine = {
      cpu: cpus()[0]?.model.trim(),
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      kernel: release(),
      node: process.version,
    };
    const inputs = { files, sitesPerFile: sites, commitsPerFile: sites + 1 };
    console.log(JSON.stringify({ machine, inputs, writer, reader }, null, 2));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
