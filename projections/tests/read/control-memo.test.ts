import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readApiKeyByHashMemo, readCompanyMemo } from '../../src/read/control-memo.ts';
import { openControlReader } from '../../src/read/open-readers.ts';
import { ReadHandle } from '../../src/read/read-handle.ts';
import { buildProjection } from '../../src/testing/build-projection.ts';
import { makeDelete, makeUpsert } from '../../src/testing/make-change.ts';
import { sampleRow } from '../../src/testing/sample-rows.ts';

// The memo must never serve a state of control.sqlite older than the last commit ingest made
// before the current event-loop turn began.
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const COMPANY = '00000000-0000-4000-8000-0000000000c1';
const KEY_ID = '00000000-0000-4000-8000-000000000900';
const sha = (key: string) => createHash('sha256').update(key).digest('hex');
const key = (fields: Record<string, unknown>) =>
  sampleRow('api_keys', { id: KEY_ID, key_sha256: sha('k'), scopes: ['sites:read'], ...fields });
let dir: string;
let control: ReadHandle;
let lsn = 1;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pda-memo-'));
  buildProjection(dir, [
    makeUpsert('companies', sampleRow('companies', { id: COMPANY, name: 'C1' }), lsn++),
    makeUpsert('api_keys', key({}), lsn++),
    makeUpsert(
      'api_key_companies',
      sampleRow('api_key_companies', { api_key_id: KEY_ID, company_id: COMPANY }),
      lsn++,
    ),
  ]);
  control = new ReadHandle(openControlReader(dir));
});

afterAll(() => {
  control.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('control memo', () => {
  test('serves the same record while control.sqlite is unchanged', () => {
    const first = readApiKeyByHashMemo(control, sha('k'));
    expect(first).toMatchObject({ id: KEY_ID, scopes: ['sites:read'], companyIds: [COMPANY] });
    expect(readApiKeyByHashMemo(control, sha('k'))).toBe(first);
    expect(Object.isFrozen(first?.scopes)).toBe(true);
    expect(readApiKeyByHashMemo(control, sha('unknown'))).toBeUndefined();
    expect(readCompanyMemo(control, COMPANY)).toBe(readCompanyMemo(control, COMPANY));
  });

  test('a commit by ingest is seen from the next event-loop turn: scopes, revocation, company, deletion', async () => {
    expect(readApiKeyByHashMemo(control, sha('k'))?.revokesAt).toBeNull();
    buildProjection(dir, [
      makeUpsert(
        'api_keys',
        key({ scopes: ['sites:read', 'services:read'], revokes_at: '2020-01-01T00:00:00Z' }),
        lsn++,
      ),
      makeUpsert('companies', sampleRow('companies', { id: COMPANY, name: 'Renamed' }), lsn++),
    ]);
    await nextTurn();
    const changed = readApiKeyByHashMemo(control, sha('k'));
    expect(changed?.scopes).toEqual(['sites:read', 'services:read']);
    expect(changed?.revokesAt).not.toBeNull();
    expect(readCompanyMemo(control, COMPANY)?.name).toBe('Renamed');

    buildProjection(dir, [makeDelete('api_keys', { id: KEY_ID }, lsn++)]);
    await nextTurn();
    expect(readApiKeyByHashMemo(control, sha('k'))).toBeUndefined();
  });
});
