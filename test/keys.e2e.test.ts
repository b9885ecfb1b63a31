// The API-key functions and CLI against the real PostgreSQL: only the hash is stored, revocation
// and rotation set revokes_at, and the key itself never appears anywhere but in issue's output.

import { deleteCompanies, seedDatabase } from '@pda/dev-world/seed';
import {
  hashApiKey,
  issueApiKey,
  KeyConflict,
  KeyNotFound,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
} from '@pda/operator-tools/keys';
import { pgConfigFromEnv } from '@pda/operator-tools/pg';
import { runOpsCli } from '@pda/operator-tools/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const client = new pg.Client(pgConfigFromEnv());
let companyA: string;
let companyB: string;

const none = { sites: 0, contactsPerSite: 0, services: 0, categories: 0, equipment: 0, consumables: 0 };

async function keyRow(id: string) {
  const { rows } = await client.query(
    'SELECT *, row_to_json(k)::text AS everything FROM api_keys k WHERE id = $1',
    [id],
  );
  return rows[0];
}

async function grants(id: string): Promise<string[]> {
  const { rows } = await client.query<{ company_id: string }>(
    'SELECT company_id FROM api_key_companies WHERE api_key_id = $1 ORDER BY company_id',
    [id],
  );
  return rows.map((r) => r.company_id);
}

beforeAll(async () => {
  await client.connect();
  const seeded = await seedDatabase(client, {
    seed: `e2e-keys-${process.pid}-${Date.now()}`,
    counts: { companies: 2, ...none },
  });
  [companyA = '', companyB = ''] = seeded.companyIds;
});

afterAll(async () => {
  await deleteCompanies(client, [companyA, companyB]).catch(() => undefined);
  await client.end();
});

describe('issueApiKey', () => {
  it('stores the SHA-256, prefix, last four, scopes and grants, never the key', async () => {
    const issued = await issueApiKey(client, {
      companyIds: [companyA, companyB],
      name: 'Partner sync',
      scopes: ['services:read', 'sites:read'],
      expiresAt: new Date('2030-01-01T00:00:00Z'),
    });
    expect(issued.key).toMatch(/^svc_pk_[A-Za-z0-9_-]{43}$/);
    const row = await keyRow(issued.id);
    expect(row.key_sha256).toBe(hashApiKey(issued.key));
    expect(row.prefix).toBe('svc_pk_');
    expect(row.last_four).toBe(issued.key.slice(-4));
    expect(row.scopes).toEqual(['sites:read', 'services:read']);
    expect(row.expires_at.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(row.revokes_at).toBeNull();
    expect(row.everything).not.toContain(issued.key.slice('svc_pk_'.length));
    expect(await grants(issued.id)).toEqual([companyA, companyB].sort());
    expect(issued.identifier).toBe(`svc_pk_…${issued.key.slice(-4)}`);
  });

  it('stores nothing when a company does not exist', async () => {
    const before = await listApiKeys(client, { companyId: companyA });
    await expect(
      issueApiKey(client, {
        companyIds: [companyA, '00000000-0000-4000-8000-000000000000'],
        name: 'x',
        scopes: ['sites:read'],
      }),
    ).rejects.toThrow(KeyConflict);
    expect(await listApiKeys(client, { companyId: companyA })).toHaveLength(before.length);
  });
});

describe('revokeApiKey', () => {
  it('sets revokes_at (default now) and never moves it later', async () => {
    const issued = await issueApiKey(client, {
      companyIds: [companyA],
      name: 'to revoke',
      scopes: ['sites:read'],
    });
    const before = new Date();
    const { revokesAt } = await revokeApiKey(client, { id: issued.id });
    const after = new Date();
    expect(revokesAt.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1);
    expect(revokesAt.getTime()).toBeLessThanOrEqual(after.getTime() + 1);
    const later = await revokeApiKey(client, { id: issued.id, at: new Date('2099-01-01T00:00:00Z') });
    expect(later.revokesAt).toEqual(revokesAt);
    expect((await keyRow(issued.id)).revokes_at).toEqual(revokesAt);
  });

  it('revokes at an explicit time and reports an unknown key', async () => {
    const issued = await issueApiKey(client, {
      companyIds: [companyB],
      name: 'scheduled',
      scopes: ['consumables:read'],
    });
    const at = new Date('2031-05-06T07:08:09Z');
    expect((await revokeApiKey(client, { id: issued.id, at })).revokesAt).toEqual(at);
    await expect(revokeApiKey(client, { id: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow(
      KeyNotFound,
    );
  });
});

describe('rotateApiKey', () => {
  it('issues a replacement with the same companies and scopes and ends the old key after the grace', async () => {
    const old = await issueApiKey(client, {
      companyIds: [companyA, companyB],
      name: 'rotating',
      scopes: ['equipment:read', 'equipment-categories:read'],
    });
    const now = new Date('2030-03-01T12:00:00Z');
    const { replacement, oldRevokesAt } = await rotateApiKey(client, { id: old.id, graceMs: 3_600_000, now });
    expect(replacement.id).not.toBe(old.id);
    expect(replacement.key).not.toBe(old.key);
    expect(oldRevokesAt.toISOString()).toBe('2030-03-01T13:00:00.000Z');
    const [oldRow, newRow] = [await keyRow(old.id), await keyRow(replacement.id)];
    expect(oldRow.revokes_at).toEqual(oldRevokesAt);
    expect(newRow.revokes_at).toBeNull();
    expect(newRow.key_sha256).toBe(hashApiKey(replacement.key));
    expect(newRow.scopes).toEqual(oldRow.scopes);
    expect(newRow.name).toBe('rotating');
    expect(await grants(replacement.id)).toEqual(await grants(old.id));
  });

  it('refuses to rotate a revoked key', async () => {
    const old = await issueApiKey(client, { companyIds: [companyA], name: 'gone', scopes: ['sites:read'] });
    await revokeApiKey(client, { id: old.id, at: new Date('2020-01-01T00:00:00Z') });
    await expect(rotateApiKey(client, { id: old.id })).rejects.toThrow(/already revoked/);
  });
});

describe('listApiKeys', () => {
  it('lists a company’s keys with identifier and status, never the key', async () => {
    const issued = await issueApiKey(client, {
      companyIds: [companyB],
      name: 'listed',
      scopes: ['sites:read'],
    });
    const listed = await listApiKeys(client, { companyId: companyB });
    const mine = listed.find((k) => k.id === issued.id);
    expect(mine).toMatchObject({ identifier: issued.identifier, status: 'active', companyIds: [companyB] });
    expect(JSON.stringify(listed)).not.toContain(issued.key);
    expect(listed.every((k) => k.companyIds.includes(companyB))).toBe(true);
  });
});

describe('keys CLI', () => {
  it('issue prints the key once; list and revoke never print it', async () => {
    const issue = await runOpsCli('keys', [
      'issue',
      '--company',
      companyA,
      '--name',
      'cli key',
      '--scopes',
      'sites:read,services:read',
      '--json',
    ]);
    expect(issue.stderr).toBe('');
    expect(issue.code).toBe(0);
    const issued = JSON.parse(issue.stdout) as { id: string; key: string; identifier: string };
    expect((await keyRow(issued.id)).key_sha256).toBe(hashApiKey(issued.key));

    const list = await runOpsCli('keys', ['list', '--company', companyA]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(issued.identifier);
    expect(list.stdout).not.toContain(issued.key);

    const revoke = await runOpsCli('keys', ['revoke', '--id', issued.id, '--at', '2032-02-02T00:00:00Z']);
    expect(revoke.code).toBe(0);
    expect((await keyRow(issued.id)).revokes_at.toISOString()).toBe('2032-02-02T00:00:00.000Z');

    const rotate = await runOpsCli('keys', ['rotate', '--id', issued.id, '--grace', '0']);
    expect(rotate.code).toBe(0);
    const printedKey = rotate.stdout.trim().split('\n').at(-1) ?? '';
    expect(printedKey).toMatch(/^svc_pk_[A-Za-z0-9_-]{43}$/);
    const { rows } = await client.query('SELECT id FROM api_keys WHERE key_sha256 = $1', [
      hashApiKey(printedKey),
    ]);
    expect(rows).toHaveLength(1);
  });

  it('answers bad arguments with one error line, the usage and exit 2, storing nothing', async () => {
    const before = (await listApiKeys(client)).length;
    for (const args of [
      ['issue', '--company', companyA, '--name', 'x', '--scopes', 'sites:write'],
      ['issue', '--company', 'not-a-uuid', '--name', 'x', '--scopes', 'sites:read'],
      ['issue', '--name', 'x', '--scopes', 'sites:read'],
      ['issue', '--company', companyA, '--name', 'x', '--scopes', 'sites:read', '--expires-at', 'soon'],
      ['rotate', '--id', companyA, '--grace', 'a week'],
      ['list', '--name', 'x'],
      ['explode'],
      [],
    ]) {
      const out = await runOpsCli('keys', args);
      expect(out.code, args.join(' ')).toBe(2);
      const [first, second] = out.stderr.split('\n');
      expect(first).toMatch(/^error: /);
      expect(second).toBe('');
      expect(out.stderr).toContain('usage: pnpm --filter @pda/operator-tools keys');
      expect(out.stdout).toBe('');
    }
    expect((await listApiKeys(client)).length).toBe(before);
  });

  it('connects with PDA_DATABASE_URL alone, and sslmode=require never falls back to plaintext', async () => {
    const { host, port, user, password, database } = pgConfigFromEnv();
    const url = `postgres://${user}:${encodeURIComponent(String(password))}@${host}:${port}/${database}`;
    // No PDA_PG_* and no stack env file: only the URL says where to go.
    const bare = { PATH: process.env.PATH, PDA_STACK_DIR: '/nonexistent-pda-stack', PDA_DATABASE_URL: url };
    const list = await runOpsCli('keys', ['list', '--company', companyA, '--json'], bare);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toBeInstanceOf(Array);
    // The stack's PostgreSQL has no TLS.
    const tls = await runOpsCli('keys', ['list', '--sslmode', 'require'], bare);
    expect(tls.code).toBe(1);
    expect(tls.stderr).toBe('error: The server does not support SSL connections\n');
  });

  it('exits 1 with one line for a key that does not exist', async () => {
    const out = await runOpsCli('keys', ['revoke', '--id', '00000000-0000-4000-8000-000000000000']);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe('error: no API key with id 00000000-0000-4000-8000-000000000000\n');
  });
});
