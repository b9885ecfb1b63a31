import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Change, Row } from '@pda/projections/model';
import { buildProjection, makeUpsert, sampleRow } from '@pda/projections/testing';

/**
 * Projection files for api tests, built the way ingest builds them: Changes applied through
 * ProjectionStore. Two tenant companies (A, B) with the same shape, a third company nobody's
 * multi-company key holds, and one API key per auth case.
 */

export const ALL_SCOPES = [
  'sites:read',
  'services:read',
  'equipment:read',
  'equipment-categories:read',
  'consumables:read',
] as const;

export const COMPANY = {
  A: uuid(0xa, 0),
  B: uuid(0xb, 0),
  C: uuid(0xc, 0),
} as const;

export type CompanyName = 'A' | 'B';

interface KeySpec {
  readonly companies: readonly string[];
  readonly scopes: readonly string[];
  readonly expiresAt?: string;
  readonly revokesAt?: string;
}

const KEYS = {
  a: { companies: [COMPANY.A], scopes: ALL_SCOPES },
  b: { companies: [COMPANY.B], scopes: ALL_SCOPES },
  multi: { companies: [COMPANY.A, COMPANY.B], scopes: ALL_SCOPES },
  noScopes: { companies: [COMPANY.A], scopes: [] },
  noCategories: {
    companies: [COMPANY.A],
    scopes: ['sites:read', 'services:read', 'equipment:read', 'consumables:read'],
  },
  expired: { companies: [COMPANY.A], scopes: ALL_SCOPES, expiresAt: '2020-01-01T00:00:00.000000Z' },
  revoked: { companies: [COMPANY.A], scopes: ALL_SCOPES, revokesAt: '2020-01-01T00:00:00.000000Z' },
  rotating: { companies: [COMPANY.A], scopes: ALL_SCOPES, revokesAt: '2999-01-01T00:00:00.000000Z' },
  orphan: { companies: [], scopes: ALL_SCOPES },
} satisfies Record<string, KeySpec>;

export type KeyName = keyof typeof KEYS;

/** Ids of every record of one company, per resource table. */
export interface CompanyIds {
  readonly sites: string[];
  readonly contacts: string[];
  readonly services: string[];
  readonly categories: string[];
  readonly equipment: string[];
  readonly consumables: string[];
}

export interface Fixture {
  readonly dataDir: string;
  /** The raw keys (what a client sends). */
  readonly keys: Record<KeyName, string>;
  readonly keyIds: Record<KeyName, string>;
  readonly ids: Record<CompanyName, CompanyIds>;
  /** A category id equipment points at but which has no row (include=category → null). */
  readonly missingCategoryId: string;
  cleanup(): void;
}

/**
 * The changes that grant a raw key its scopes on the companies, as the source holds them: its
 * api_keys row, then an api_key_companies row per company, each at the position `next()` hands out.
 */
export function keyGrant(
  grant: { key: string; id: string; companies: readonly string[]; scopes: readonly string[] },
  next: () => number,
): Change[] {
  return [
    makeUpsert(
      'api_keys',
      sampleRow('api_keys', {
        id: grant.id,
        key_sha256: createHash('sha256').update(grant.key).digest('hex'),
        scopes: [...grant.scopes],
      }),
      next(),
    ),
    ...grant.companies.map((company) =>
      makeUpsert(
        'api_key_companies',
        sampleRow('api_key_companies', { api_key_id: grant.id, company_id: company }),
        next(),
      ),
    ),
  ];
}

/** `uuid(0xa, 5)` → 0000000a-0000-4000-8000-000000000005: readable and a canonical uuid. */
export function uuid(group: number, n: number): string {
  return `${group.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

export function createFixture(): Fixture {
  const dataDir = mkdtempSync(join(tmpdir(), 'pda-api-test-'));
  const changes: Change[] = [];
  let lsn = 1000;
  const add = (table: Parameters<typeof makeUpsert>[0], row: Row) =>
    changes.push(makeUpsert(table, row, lsn++));

  for (const [name, id] of Object.entries(COMPANY)) {
    add(
      'companies',
      sampleRow('companies', { id, name: `Company ${name}`, currency: name === 'B' ? 'EUR' : 'CAD' }),
    );
  }
  const keys = {} as Record<KeyName, string>;
  const keyIds = {} as Record<KeyName, string>;
  Object.entries(KEYS).forEach(([name, spec]: [string, KeySpec], index) => {
    const raw = `svc_pk_test${name}${'x'.repeat(20)}${index.toString().padStart(4, '0')}`;
    const id = uuid(0xe, index + 1);
    keys[name as KeyName] = raw;
    keyIds[name as KeyName] = id;
    add(
      'api_keys',
      sampleRow('api_keys', {
        id,
        name: `key ${name}`,
        prefix: 'svc_pk_',
        last_four: raw.slice(-4),
        key_sha256: createHash('sha256').update(raw).digest('hex'),
        scopes: [...spec.scopes],
        expires_at: spec.expiresAt ?? null,
        revokes_at: spec.revokesAt ?? null,
      }),
    );
    for (const companyId of spec.companies) {
      add('api_key_companies', sampleRow('api_key_companies', { api_key_id: id, company_id: companyId }));
    }
  });

  const missingCategoryId = uuid(0xdead, 1);
  const ids = {} as Record<CompanyName, CompanyIds>;
  for (const name of ['A', 'B'] as const) {
    const companyId = COMPANY[name];
    const group = name === 'A' ? 0x1a : 0x1b;
    const id = (n: number) => uuid(group, n);
    const set: CompanyIds = {
      sites: [],
      contacts: [],
      services: [],
      categories: [],
      equipment: [],
      consumables: [],
    };
    for (let i = 1; i <= 3; i++) {
      set.sites.push(id(100 + i));
      add('sites', sampleRow('sites', { id: id(100 + i), company_id: companyId, name: `${name} site ${i}` }));
    }
    for (let i = 1; i <= 3; i++) {
      const siteId = set.sites[i === 3 ? 1 : 0]!;
      set.contacts.push(id(200 + i));
      add(
        'site_contacts',
        sampleRow('site_contacts', { id: id(200 + i), company_id: companyId, site_id: siteId }),
      );
    }
    for (let i = 1; i <= 2; i++) {
      set.services.push(id(300 + i));
      add(
        'services',
        sampleRow('services', { id: id(300 + i), company_id: companyId, name: `${name} service ${i}` }),
      );
    }
    for (let i = 1; i <= 2; i++) {
      set.categories.push(id(400 + i));
      add(
        'equipment_categories',
        sampleRow('equipment_categories', {
          id: id(400 + i),
          company_id: companyId,
          name: `${name} category ${i}`,
        }),
      );
    }
    for (let i = 1; i <= 3; i++) {
      set.equipment.push(id(500 + i));
      const categoryId = i === 3 ? missingCategoryId : set.categories[i - 1]!;
      add(
        'equipment',
        sampleRow('equipment', {
          id: id(500 + i),
          company_id: companyId,
          category_id: categoryId,
          name: `${name} equipment ${i}`,
        }),
      );
    }
    for (let i = 1; i <= 2; i++) {
      set.consumables.push(id(600 + i));
      add(
        'consumables',
        sampleRow('consumables', { id: id(600 + i), company_id: companyId, name: `${name} salt ${i}` }),
      );
    }
    ids[name] = set;
  }
  buildProjection(dataDir, changes);
  return {
    dataDir,
    keys,
    keyIds,
    ids,
    missingCategoryId,
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
