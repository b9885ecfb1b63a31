import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  companyPath,
  controlPath,
  fileVersion,
  latestVersion,
  migrate,
  ProjectionError,
  ProjectionVersionError,
} from '../src/model/index.ts';
import { openCompanyReader, openControlReader } from '../src/read/index.ts';
import { openCompanyWriter, openControlWriter } from '../src/write/index.ts';
import { A, B, tempDataDir } from './helpers.ts';

describe('migrations', () => {
  it('creates files at the latest version, readable by readers', () => {
    const dir = tempDataDir();
    openControlWriter(dir).close();
    openCompanyWriter(dir, A).close();
    const control = openControlReader(dir);
    const company = openCompanyReader(dir, A);
    expect(fileVersion(control)).toBe(latestVersion('control'));
    expect(fileVersion(company)).toBe(latestVersion('company'));
    expect(company.prepare('SELECT company_id, last_changed_us FROM meta').get()).toEqual({
      company_id: A,
      last_changed_us: 0,
    });
    control.close();
    company.close();
  });

  it('creates company files from a template: WAL mode, latest version, no stray files', () => {
    const dir = tempDataDir();
    for (const company of [A, B]) {
      const db = openCompanyWriter(dir, company);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(fileVersion(db)).toBe(latestVersion('company'));
      expect(db.prepare('SELECT company_id FROM meta').pluck().get()).toBe(company);
      db.close();
    }
    expect(readdirSync(join(dir, 'companies')).sort()).toEqual([`${A}.sqlite`, `${B}.sqlite`]);
  });

  it('upgrades an old-version file in place, keeping its rows', () => {
    const dir = tempDataDir();
    const path = controlPath(dir);
    const old = new Database(path);
    migrate(old, 'control', 1);
    old.prepare("INSERT INTO routes (table_name, id, company_id) VALUES ('sites', 'x', ?)").run(A);
    expect(fileVersion(old)).toBe(1);
    old.close();

    const db = openControlWriter(dir);
    expect(fileVersion(db)).toBe(latestVersion('control'));
    expect(db.prepare('SELECT * FROM routes').all()).toEqual([
      { table_name: 'sites', id: 'x', company_id: A, _src_lsn: 0 },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM dead_letters').get()).toEqual({ n: 0 });
    db.close();
  });

  it('refuses a file from a newer schema, for writers and readers, and leaves it untouched', () => {
    const dir = tempDataDir();
    openCompanyWriter(dir, A).close();
    const raw = new Database(companyPath(dir, A));
    raw.pragma('user_version = 99');
    raw.close();

    for (const open of [() => openCompanyWriter(dir, A), () => openCompanyReader(dir, A)]) {
      const error = catchError(open);
      expect(error).toBeInstanceOf(ProjectionVersionError);
      expect(error).toMatchObject({ code: 'projection_too_new', fileVersion: 99 });
    }
    const after = new Database(companyPath(dir, A), { readonly: true });
    expect(fileVersion(after)).toBe(99);
    after.close();
  });

  it('readers refuse a file not yet migrated to the version they know (the writer migrates it)', () => {
    const dir = tempDataDir();
    const old = new Database(controlPath(dir));
    migrate(old, 'control', 1);
    old.close();
    expect(catchError(() => openControlReader(dir))).toMatchObject({
      code: 'projection_too_old',
      fileVersion: 1,
    });
  });

  it('answers a missing file or a non-uuid company id with a typed error, creating nothing', () => {
    const dir = tempDataDir();
    expect(catchError(() => openControlReader(dir))).toMatchObject({ code: 'projection_not_found' });
    expect(catchError(() => openCompanyReader(dir, A))).toMatchObject({ code: 'projection_not_found' });
    for (const bad of ['../control', 'AAAAAAAA-0000-4000-8000-00000000000A', `${A}/x`, '', 'x'.repeat(500)]) {
      const error = catchError(() => openCompanyWriter(dir, bad));
      expect(error).toBeInstanceOf(ProjectionError);
      expect(error).toMatchObject({ code: 'invalid_company_id' });
    }
    expect(existsSync(companyPath(dir, A))).toBe(false);
  });

  it('gives readers handles that cannot write', () => {
    const dir = tempDataDir();
    openCompanyWriter(dir, A).close();
    const reader = openCompanyReader(dir, A);
    expect(() => reader.prepare('DELETE FROM sites').run()).toThrow(/readonly|read-only|query_only/i);
    reader.close();
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
