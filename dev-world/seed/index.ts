// @pda/dev-world/seed: the deterministic seed generator, its COPY loader and the removal of a test's companies.

export type { CompanyProfile } from './company-profile.ts';
export { companyProfile } from './company-profile.ts';
export { writeSeedRows } from './copy-writer.ts';
export type { SeedCounts } from './counts.ts';
export { DEFAULT_COUNTS, totalRows, validateCounts } from './counts.ts';
export { deleteCompanies } from './delete-companies.ts';
export { generateCompanyData, generateOneCompany } from './generate.ts';
export type * from './rows.ts';
export { SEED_COLUMNS, SEED_TABLES } from './rows.ts';
export type { SeedOptions, SeedResult } from './seed-database.ts';
export { SeedConflictError, seedDatabase } from './seed-database.ts';
