import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openReader, openWriter } from '../src/model/open.ts';
import { tempDataDir } from './helpers.ts';

// The writer has no checkpoint call of its own (src/model/open.ts): the automatic checkpoints must keep
// the WAL near its bound (1000 pages ≈ 4 MiB) by themselves, also with a reader that comes and goes.
describe('openWriter', () => {
  it('sets every pragma of the one exec', () => {
    const db = openWriter(join(tempDataDir(), 'pragmas.sqlite'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(0);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(db.pragma('journal_size_limit', { simple: true })).toBe(64 * 1024 * 1024);
    expect(db.pragma('temp_store', { simple: true })).toBe(2); // MEMORY
    db.close();
  });

  it('keeps the WAL bounded by automatic checkpoints over many commits', () => {
    const path = join(tempDataDir(), 'wal.sqlite');
    const db = openWriter(path);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)');
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const commit = db.transaction((n: number) => {
      for (let i = 0; i < n; i++) insert.run(Buffer.alloc(1024, i));
    });
    const reader = openReader(path);
    const count = reader.prepare('SELECT count(*) FROM t').pluck();
    let maxWal = 0;
    // 300 commits of ~100 KiB: ~30 MiB through the WAL, several times its bound.
    for (let c = 0; c < 300; c++) {
      commit(100);
      if (c % 10 === 0) count.get(); // a reader's short snapshot between commits, as the api takes
      maxWal = Math.max(maxWal, statSync(`${path}-wal`).size);
    }
    expect(count.get()).toBe(30_000);
    reader.close();
    db.close();
    expect(maxWal).toBeGreaterThan(1024 * 1024);
    expect(maxWal).toBeLessThan(6 * 1024 * 1024);
  });
});
