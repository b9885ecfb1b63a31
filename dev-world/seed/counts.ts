// How much to generate. Every count except `companies` is per company, so
// `--companies 1 --sites 1000000` builds the single large tenant the api benchmark needs.

export interface SeedCounts {
  companies: number;
  sites: number;
  contactsPerSite: number;
  services: number;
  categories: number;
  equipment: number;
  consumables: number;
}

/** A small demo: three companies with enough rows to page through. */
export const DEFAULT_COUNTS: Readonly<SeedCounts> = Object.freeze({
  companies: 3,
  sites: 120,
  contactsPerSite: 2,
  services: 12,
  categories: 8,
  equipment: 40,
  consumables: 10,
});

/** Throws a one-line message naming the bad count. */
export function validateCounts(counts: SeedCounts): SeedCounts {
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`${name} must be a whole number >= 0, got ${value}`);
    }
  }
  if (counts.equipment > 0 && counts.categories === 0) {
    throw new Error('equipment needs at least one category (equipment.category_id is NOT NULL)');
  }
  return counts;
}

export function totalRows(counts: SeedCounts): number {
  const perCompany =
    1 +
    counts.sites * (1 + counts.contactsPerSite) +
    counts.services +
    counts.categories +
    counts.equipment +
    counts.consumables;
  return counts.companies * perCompany;
}
