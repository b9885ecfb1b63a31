// Input checks shared by issue/rotate/revoke, so a bad value gets a clear message instead of a
// PostgreSQL cast error.

import { InvalidKeyRequest } from './key-errors.ts';
import { isScope, SCOPE_NAMES, type Scope } from './scopes.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function checkUuid(what: string, value: string): string {
  if (!UUID.test(value)) throw new InvalidKeyRequest(`${what} must be a uuid, got ${JSON.stringify(value)}`);
  return value.toLowerCase();
}

export function checkCompanyIds(ids: readonly string[]): string[] {
  if (ids.length === 0) throw new InvalidKeyRequest('a key needs at least one company');
  return [...new Set(ids.map((id) => checkUuid('company id', id)))];
}

export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new InvalidKeyRequest('a key needs a non-empty name');
  if (trimmed.length > 200) throw new InvalidKeyRequest('a key name is at most 200 characters');
  return trimmed;
}

/** Known scopes only, without duplicates, in the vocabulary's order. */
export function checkScopes(scopes: readonly string[]): Scope[] {
  if (scopes.length === 0)
    throw new InvalidKeyRequest(`a key needs at least one scope (${SCOPE_NAMES.join(', ')})`);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) {
    throw new InvalidKeyRequest(
      `unknown scope ${JSON.stringify(unknown[0])}; known: ${SCOPE_NAMES.join(', ')}`,
    );
  }
  return SCOPE_NAMES.filter((s) => scopes.includes(s));
}

/** An ISO 8601 date-time with an explicit zone (Z or ±hh:mm), so no local-time guessing. */
export function parseInstant(what: string, value: string): Date {
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const date = new Date(value);
  if (!zoned || Number.isNaN(date.getTime())) {
    throw new InvalidKeyRequest(
      `${what} must be an ISO 8601 date-time with a zone, e.g. 2026-01-31T00:00:00Z; got ${JSON.stringify(value)}`,
    );
  }
  return date;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "7d", "12h", "30m", "90s", "2w" or "0" → milliseconds. */
export function parseDuration(what: string, value: string): number {
  if (value === '0') return 0;
  const match = /^(\d{1,6})([smhdw])$/.exec(value);
  const unit = match?.[2] === undefined ? undefined : UNIT_MS[match[2]];
  if (!match || unit === undefined) {
    throw new InvalidKeyRequest(
      `${what} must look like 7d, 12h, 30m, 90s, 2w or 0; got ${JSON.stringify(value)}`,
    );
  }
  return Number(match[1]) * unit;
}
