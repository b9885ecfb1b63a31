// The generator's public entry: every row of every company, in foreign-key order, as a stream.
import { type CompanyProfile, companyProfile } from './company-profile.ts';
import { type SeedCounts, validateCounts } from './counts.ts';
import {
  generateCategories,
  generateConsumables,
  generateEquipment,
  generateServices,
} from './generate-catalogue.ts';
import { generateContacts, generateSites } from './generate-sites.ts';
import type { SeedRow } from './rows.ts';

/** All rows of one company: the company, then its catalogue, then its sites and their contacts. */
export function* generateOneCompany(company: CompanyProfile, counts: SeedCounts): Generator<SeedRow> {
  yield { table: 'companies', row: company.row };
  for (const row of generateCategories(company, counts.categories)) {
    yield { table: 'equipment_categories', row };
  }
  for (const row of generateEquipment(company, counts.equipment, counts.categories)) {
    yield { table: 'equipment', row };
  }
  for (const row of generateConsumables(company, counts.consumables)) {
    yield { table: 'consumables', row };
  }
  for (const row of generateServices(company, counts.services)) {
    yield { table: 'services', row };
  }
  for (const row of generateSites(company, counts.sites)) yield { table: 'sites', row };
  for (const row of generateContacts(company, counts.sites, counts.contactsPerSite)) {
    yield { table: 'site_contacts', row };
  }
}

/**
 * Every row of `counts.companies` companies. Same seed, run and counts → the same rows, ids
 * included; another run gives the same rows under other ids (ids.ts).
 * Nothing is held in memory beyond the current row, so this scales to millions of rows.
 */
export function* generateCompanyData(
  seed: number | string,
  counts: SeedCounts,
  run = '',
): Generator<SeedRow> {
  validateCounts(counts);
  for (let index = 0; index < counts.companies; index++) {
    yield* generateOneCompany(companyProfile(seed, index, run), counts);
  }
}
