// Public surface of @pda/ops: the seed generator, the API-key functions and the scope vocabulary.

export { pgConfigFromEnv } from './pg/pg-config.ts';
export type { Scope, ScopeEntry } from './scopes.ts';
export { isScope, SCOPE_NAMES, SCOPES } from './scopes.ts';
export type { CompanyProfile } from './seed/company-profile.ts';
export { companyProfile } from './seed/company-profile.ts';
export { writeSeedRows } from './seed/copy-writer.ts';
export type { SeedCounts } from './seed/counts.ts';
export { DEFAULT_COUNTS, totalRows, validateCounts } from './seed/counts.ts';
export { generateCompanyData, generateOneCompany } from './seed/generate.ts';
export type * from './seed/rows.ts';
export { SEED_COLUMNS, SEED_TABLES } from './seed/rows.ts';
export type { SeedOptions, SeedResult } from './seed/seed-database.ts';
export { SeedConflictError, seedDatabase } from './seed/seed-database.ts';
