import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hashApiKey,
  InvalidKeyRequest,
  keyIdentifier,
  keyStatus,
  newKeyMaterial,
  parseDuration,
  parseInstant,
  SCOPE_NAMES,
  SCOPES,
} from '../../keys/index.ts';
import { checkScopes } from '../../keys/validate.ts';

describe('API key material', () => {
  it('is svc_pk_ + 43 url-safe characters, hashed with SHA-256 hex', () => {
    const m = newKeyMaterial();
    expect(m.key).toMatch(/^svc_pk_[A-Za-z0-9_-]{43}$/);
    expect(m.sha256).toBe(createHash('sha256').update(m.key).digest('hex'));
    expect(m.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(m.lastFour).toBe(m.key.slice(-4));
    expect(m.prefix).toBe('svc_pk_');
    expect(newKeyMaterial().key).not.toBe(m.key);
  });

  it('hashes a known key to its known digest', () => {
    // printf svc_pk_test | sha256sum
    expect(hashApiKey('svc_pk_test')).toBe(
      'a443f2e24aa333882922b195eed945e9948e2fc661962418c95f3e33b9f90414',
    );
    expect(keyIdentifier('svc_pk_', 'abcd')).toBe('svc_pk_…abcd');
  });
});

describe('scope vocabulary', () => {
  it("starts with the spec's v1 list (a new resource only appends), each {resource}:{ability}", () => {
    expect(SCOPE_NAMES.slice(0, 5)).toEqual([
      'sites:read',
      'services:read',
      'equipment:read',
      'equipment-categories:read',
      'consumables:read',
    ]);
    for (const s of SCOPES) expect(s.scope).toBe(`${s.resource}:${s.ability}`);
  });

  it('accepts known scopes in vocabulary order without duplicates and rejects others', () => {
    expect(checkScopes(['consumables:read', 'sites:read', 'sites:read'])).toEqual([
      'sites:read',
      'consumables:read',
    ]);
    expect(() => checkScopes(['sites:write'])).toThrow(InvalidKeyRequest);
    expect(() => checkScopes([])).toThrow(/at least one scope/);
  });
});

describe('CLI value parsing', () => {
  it.each([
    ['0', 0],
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['12h', 43_200_000],
    ['7d', 604_800_000],
    ['2w', 1_209_600_000],
  ])('duration %s = %i ms', (text, ms) => {
    expect(parseDuration('--grace', text)).toBe(ms);
  });

  it.each(['', '7', 'd', '-1d', '1.5h', '7 days'])('rejects duration %j', (text) => {
    expect(() => parseDuration('--grace', text)).toThrow(InvalidKeyRequest);
  });

  it('accepts zoned ISO instants only', () => {
    expect(parseInstant('--at', '2026-01-31T00:00:00Z').toISOString()).toBe('2026-01-31T00:00:00.000Z');
    expect(parseInstant('--at', '2026-01-31T01:00:00+01:00').toISOString()).toBe('2026-01-31T00:00:00.000Z');
    for (const bad of ['2026-01-31', '2026-01-31T00:00:00', 'tomorrow', '2026-13-01T00:00:00Z']) {
      expect(() => parseInstant('--at', bad), bad).toThrow(InvalidKeyRequest);
    }
  });

  it('derives the status shown by list', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    const before = new Date('2026-05-01T00:00:00Z');
    const after = new Date('2026-07-01T00:00:00Z');
    expect(keyStatus({ expiresAt: null, revokesAt: null }, now)).toBe('active');
    expect(keyStatus({ expiresAt: after, revokesAt: after }, now)).toBe('rotating');
    expect(keyStatus({ expiresAt: null, revokesAt: before }, now)).toBe('revoked');
    expect(keyStatus({ expiresAt: before, revokesAt: null }, now)).toBe('expired');
  });
});
