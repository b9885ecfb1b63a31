import { type ApiKeyRecord, type CompanyRecord, readCompanyMemo } from '@pda/projections/read';
import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import type { ProjectionFiles } from '../company-files/projection-files.ts';
import { ApiError } from '../errors/api-error.ts';
import type { Credential } from './credential.ts';

/**
 * Turns a resolved credential into the tenant of a request, or the documented refusal
 * (docs/public-data-api-v1.md, "Authentication"; api/README.md, "Errors"): 401 for
 * no/bad/expired/revoked keys, company selection for multi-company keys, 403 for a missing scope.
 */

export interface Tenant {
  readonly key: ApiKeyRecord;
  readonly company: CompanyRecord;
}

const CHALLENGE = 'Bearer realm="public-data-api"';

export function authorize(
  credential: Credential,
  selectedCompany: string | string[] | undefined,
  scopes: readonly string[],
  files: ProjectionFiles,
  nowMs: number,
): Tenant {
  if (credential.kind === 'unavailable') throw credential.error;
  if (credential.kind !== 'key') {
    // Missing, malformed and unknown keys get the same answer: nothing tells a guesser which.
    const challenge = credential.kind === 'none' ? CHALLENGE : `${CHALLENGE}, error="invalid_token"`;
    throw unauthorized(
      'unauthenticated',
      'A valid API key is required: send Authorization: Bearer <key>.',
      challenge,
    );
  }
  const { key } = credential;
  if (key.revokesAt !== null && !isFuture(key.revokesAt, nowMs)) {
    throw unauthorized('api_key_revoked', 'This API key has been replaced and its grace period is over.');
  }
  if (key.expiresAt !== null && !isFuture(key.expiresAt, nowMs)) {
    throw unauthorized('api_key_expired', 'This API key has expired.');
  }
  const company = selectCompany(key, selectedCompany, files);
  const missing = scopes.filter((scope) => !key.scopes.includes(scope));
  if (missing.length > 0) {
    throw new ApiError('insufficient_scope', `This API key lacks the scope ${missing.join(', ')}.`);
  }
  return { key, company };
}

/** Also used for included relations: each needs its own resource's scope. */
export function requireScope(tenant: Tenant, scope: string, reason: string): void {
  if (!tenant.key.scopes.includes(scope)) {
    throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope} (${reason}).`);
  }
}

/**
 * The resource types the key may read, for a feed that lists several (deletions, changes) when the
 * request names none; a key that may read none is refused, naming what `listed` lists.
 */
export function readableTypes(tenant: Tenant, listed: string): ResourceName[] {
  const types = RESOURCE_NAMES.filter((name) => tenant.key.scopes.includes(RESOURCES[name].scope));
  if (types.length === 0) {
    const scopes = RESOURCE_NAMES.map((name) => RESOURCES[name].scope).join(', ');
    throw new ApiError(
      'insufficient_scope',
      `This API key holds none of the read scopes whose ${listed} are listed (${scopes}).`,
    );
  }
  return types;
}

function selectCompany(
  key: ApiKeyRecord,
  header: string | string[] | undefined,
  files: ProjectionFiles,
): CompanyRecord {
  let companyId: string | undefined;
  if (key.companyIds.length === 1) {
    // Single-company keys ignore X-Service-Company (docs/public-data-api-v1.md, "Authentication" 5).
    companyId = key.companyIds[0];
  } else if (key.companyIds.length > 1) {
    if (header === undefined || header === '') {
      throw new ApiError(
        'company_selection_required',
        'This API key is granted several companies: select one with the X-Service-Company header.',
        {
          errors: [
            { parameter: 'X-Service-Company', detail: 'required for a key granted several companies' },
          ],
        },
      );
    }
    if (typeof header === 'string' && key.companyIds.includes(header)) companyId = header;
  }
  const company = companyId === undefined ? undefined : readCompanyMemo(files.control(), companyId);
  if (!company) {
    // Same answer whether the company does not exist or is not granted (never reveal which).
    throw new ApiError('company_not_available', 'The selected company is not available to this API key.');
  }
  return company;
}

function isFuture(timestamp: string, nowMs: number): boolean {
  const ms = Date.parse(timestamp);
  // An unreadable timestamp fails closed (treated as already passed).
  return Number.isFinite(ms) && ms > nowMs;
}

function unauthorized(
  code: 'unauthenticated' | 'api_key_expired' | 'api_key_revoked',
  detail: string,
  challenge = `${CHALLENGE}, error="invalid_token"`,
): ApiError {
  return new ApiError(code, detail, { headers: { 'www-authenticate': challenge } });
}
