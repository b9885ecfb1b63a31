import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrate } from './migrate.ts';
import { openWriter } from './open.ts';

/**
 * New company files are copies of an empty, migrated, WAL-mode file built once per process.
 * Creating each file from scratch costs a rollback-journal transaction to switch it to WAL and one
 * transaction per migration step (six fsyncs); a copy costs none, which
 * matters when a snapshot or a rebuild creates thousands of companies.
 */

let template: Buffer | undefined;

/** Built next to the company files (no dependency on a writable /tmp); the name is not a uuid. */
function templateBytes(dir: string): Buffer {
  if (template) return template;
  const path = join(dir, `.template-${process.pid}.sqlite`);
  try {
    const db = openWriter(path);
    migrate(db, 'company');
    db.close(); // checkpoints: everything is in the main file, which stays in WAL mode
    template = readFileSync(path);
  } finally {
    rmSync(path, { force: true });
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
  }
  return template;
}

/** Creates `path` as an empty company file at the code's schema version, atomically (write + rename). */
export function createCompanyFile(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, templateBytes(dirname(path)));
  renameSync(partial, path);
}
