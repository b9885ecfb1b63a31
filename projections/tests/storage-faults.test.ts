import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  CompanyFileDamagedError,
  classifyFault,
  mountedReadOnly,
  probeStorage,
  storageFaultOf,
} from '../src/model/index.ts';

const sqlite = (code: string) => Object.assign(new Database.SqliteError('x', code), {});
const sys = (code: string) => Object.assign(new Error(code), { code });

describe('classifyFault', () => {
  it.each([
    [sqlite('SQLITE_FULL'), 'full'],
    [sys('ENOSPC'), 'full'],
    [sys('EDQUOT'), 'full'],
    [sqlite('SQLITE_READONLY'), 'read_only'],
    [sqlite('SQLITE_READONLY_RECOVERY'), 'read_only'],
    [sys('EROFS'), 'read_only'],
    [sqlite('SQLITE_IOERR_WRITE'), 'io'],
    [sqlite('SQLITE_IOERR_FSYNC'), 'io'],
    [sqlite('SQLITE_CANTOPEN'), 'io'],
    [sys('EIO'), 'io'],
    [sqlite('SQLITE_CORRUPT'), 'damaged'],
    [sqlite('SQLITE_CORRUPT_INDEX'), 'damaged'],
    [sqlite('SQLITE_NOTADB'), 'damaged'],
    // A write into a file deleted or renamed while open: the file is gone, not the storage.
    [sqlite('SQLITE_READONLY_DBMOVED'), 'damaged'],
    [new CompanyFileDamagedError('aaaaaaaa-0000-4000-8000-00000000000a', 'missing'), 'damaged'],
    [new Error('x', { cause: sqlite('SQLITE_FULL') }), 'full'],
    [sqlite('SQLITE_BUSY'), undefined],
    [sqlite('SQLITE_CONSTRAINT_UNIQUE'), undefined],
    [sys('ENOENT'), undefined],
    [new Error('plain'), undefined],
    ['a string', undefined],
    [null, undefined],
  ])('%s → %s', (error, kind) => {
    expect(classifyFault(error)).toBe(kind);
  });

  it('storageFaultOf leaves damaged files to the per-company path', () => {
    expect(storageFaultOf(sqlite('SQLITE_CORRUPT'))).toBeUndefined();
    expect(storageFaultOf(sqlite('SQLITE_FULL'))).toBe('full');
  });
});

describe('probeStorage', () => {
  it('keeps the fallback for a writable directory with room, and for one that is gone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-probe-'));
    try {
      expect(probeStorage(dir, 'io')).toBe('io');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(probeStorage(dir, 'io')).toBe('io');
  });
});

describe('mountedReadOnly', () => {
  const mounts = [
    '/dev/vda1 / ext4 rw,relatime 0 0',
    'tmpfs /tmp tmpfs rw,nosuid 0 0',
    '/dev/loop0 /tmp/x/mnt ext4 rw,relatime,errors=remount-ro,emergency_ro 0 0',
    '/dev/loop1 /tmp/y\\040z ext4 ro,relatime 0 0',
  ].join('\n');
  it('reads the options of the longest mount point holding the directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-mounts-'));
    try {
      // The real path of a temp dir is under / or /tmp here: both rw in the table.
      expect(mountedReadOnly(dir, mounts)).toBe(false);
      expect(mountedReadOnly(dir, mounts.replace('tmpfs /tmp tmpfs rw', 'tmpfs /tmp tmpfs ro'))).toBe(
        dir.startsWith('/tmp/'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('is false when the directory does not exist', () => {
    expect(mountedReadOnly('/nonexistent/dir', mounts)).toBe(false);
  });
});
