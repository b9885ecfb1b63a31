// Public surface of @pda/ops: the seed generator, the API-key functions, the scope vocabulary, the
// reader of the native stack's addresses, the balancer's configuration and reconcile (a projection
// compared with PostgreSQL).

export type { BalancerNode, BalancerOptions, NodePorts } from './balancer/haproxy-config.ts';
export { BalancerConfigError, HAPROXY_TEMPLATE, renderHaproxyConfig } from './balancer/haproxy-config.ts';
export type { IssuedApiKey, IssueRequest } from './keys/issue.ts';
export { issueApiKey } from './keys/issue.ts';
export { InvalidKeyRequest, KeyConflict, KeyNotFound } from './keys/key-errors.ts';
export type { KeyMaterial } from './keys/key-material.ts';
export { hashApiKey, KEY_PREFIX, keyIdentifier, newKeyMaterial } from './keys/key-material.ts';
export type { KeyStatus, ListedApiKey } from './keys/list.ts';
export { keyStatus, listApiKeys } from './keys/list.ts';
export type { RevokeRequest, RevokeResult } from './keys/revoke.ts';
export { revokeApiKey } from './keys/revoke.ts';
export type { RotateRequest, RotateResult } from './keys/rotate.ts';
export { DEFAULT_GRACE_MS, rotateApiKey } from './keys/rotate.ts';
export { parseDuration, parseInstant } from './keys/validate.ts';
export type { ConnectionFlags, ResolvedConnection } from './pg/connection.ts';
export { connectClient, resolveConnection } from './pg/connection.ts';
export type { DatabaseUrl } from './pg/database-url.ts';
export { parseDatabaseUrl } from './pg/database-url.ts';
export { pgConfigFromEnv } from './pg/pg-config.ts';
export type { TlsSettings } from './pg/tls.ts';
export { tlsOptions } from './pg/tls.ts';
export {
  DEFAULT_CLOCK_MARGIN_MS,
  DEFAULT_WAIT_MS,
  InvalidReconcileRequest,
  reconcile,
} from './reconcile/reconcile.ts';
export { sourceRows } from './reconcile/source-rows.ts';
export { sourceExpression } from './reconcile/tables.ts';
export type * from './reconcile/types.ts';
export type { Scope, ScopeEntry } from './scopes.ts';
export { isScope, SCOPE_NAMES, SCOPES } from './scopes.ts';
export type { CompanyProfile } from './seed/company-profile.ts';
export { companyProfile } from './seed/company-profile.ts';
export { writeSeedRows } from './seed/copy-writer.ts';
export type { SeedCounts } from './seed/counts.ts';
export { DEFAULT_COUNTS, totalRows, validateCounts } from './seed/counts.ts';
export { deleteCompanies } from './seed/delete-companies.ts';
export { generateCompanyData, generateOneCompany } from './seed/generate.ts';
export type * from './seed/rows.ts';
export { SEED_COLUMNS, SEED_TABLES } from './seed/rows.ts';
export type { SeedOptions, SeedResult } from './seed/seed-database.ts';
export { SeedConflictError, seedDatabase } from './seed/seed-database.ts';
export { loadStackEnv, readStackEnv, stackDir, stackEnvFile } from './stack-env.ts';
