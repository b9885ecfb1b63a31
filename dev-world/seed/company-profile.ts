// A company's profile: everything its rows depend on, derived from (seed, company index) alone so
// any table of any company can be generated independently of the others; ids also take the run
// (ids.ts).

import { CITIES, type City, type Country, CURRENCY_BY_COUNTRY } from './geo.ts';
import { companyIdSpace, rowUuid } from './ids.ts';
import { COMPANY_NAME_PARTS } from './place-words.ts';
import { deriveKey, hashString, Rng } from './prng.ts';
import type { CompanyRow } from './rows.ts';
import type { LineOfBusiness } from './service-templates.ts';

export interface CompanyProfile {
  /** stream key of this company; tables derive their own keys from it */
  key: number;
  /** id space of this company in its run: `rowUuid(idSpace, table, i)` */
  idSpace: string;
  index: number;
  id: string;
  country: Country;
  currency: string;
  /** the one or two cities its crews drive to */
  cities: readonly City[];
  lines: readonly LineOfBusiness[];
  row: CompanyRow;
}

// Weighted so a demo of three companies shows all three currencies (USD, CAD, EUR).
const COUNTRY_CYCLE: readonly Country[] = ['US', 'CA', 'DE', 'US', 'FI', 'CA', 'AT', 'US', 'NL'];

const SUFFIX: Record<LineOfBusiness | 'both', Record<'en' | 'local', readonly string[]>> = {
  snow: {
    en: ['Snow & Ice', 'Snow Management', 'Snow Services'],
    local: ['Winterdienst', 'Talvipalvelu', 'Gladheidsbestrijding'],
  },
  landscaping: {
    en: ['Landscaping', 'Grounds Care', 'Lawn & Garden'],
    local: ['Gartenbau', 'Viherpalvelu', 'Hoveniers'],
  },
  both: {
    en: ['Property Services', 'Site Services', 'Outdoor Services'],
    local: ['Hausmeisterservice', 'Kiinteistöhuolto', 'Buitendienst'],
  },
};
const LOCAL_SUFFIX_INDEX: Partial<Record<Country, number>> = { DE: 0, AT: 0, FI: 1, NL: 2 };

/** The stream key of a whole seed run; `--seed 42` and `--seed "42"` are the same run. */
export function seedKey(seed: number | string): number {
  return hashString(`pda-seed:${String(seed)}`);
}

/** Company `index` of a seed; `run` changes its ids (and its rows' ids) but nothing else. */
export function companyProfile(seed: number | string, index: number, run = ''): CompanyProfile {
  const key = deriveKey(deriveKey(seedKey(seed), 'companies'), index);
  const rng = new Rng(key);
  const idSpace = companyIdSpace(seed, run, index);
  const id = rowUuid(idSpace, 'companies', 0);
  const country = COUNTRY_CYCLE[index % COUNTRY_CYCLE.length] ?? 'US';
  const roll = rng.int(0, 9);
  const lines: LineOfBusiness[] = roll < 4 ? ['snow'] : roll < 6 ? ['landscaping'] : ['snow', 'landscaping'];
  const suffixes = SUFFIX[lines.length === 2 ? 'both' : (lines[0] ?? 'snow')];
  const local = LOCAL_SUFFIX_INDEX[country];
  const suffix = local === undefined ? rng.pick(suffixes.en) : (suffixes.local[local] ?? 'Services');
  const base = COMPANY_NAME_PARTS[(index + rng.int(0, 3)) % COMPANY_NAME_PARTS.length] ?? 'Northern Edge';
  // Past the word list, a company number keeps names unique.
  const name = index < COMPANY_NAME_PARTS.length ? `${base} ${suffix}` : `${base} ${suffix} ${index + 1}`;
  const all = CITIES[country];
  const first = rng.int(0, all.length - 1);
  const cities = rng.chance(0.5) ? [all[first]] : [all[first], all[(first + 1) % all.length]];
  const currency = CURRENCY_BY_COUNTRY[country];
  return {
    key,
    idSpace,
    index,
    id,
    country,
    currency,
    cities: cities.filter((c): c is City => c !== undefined),
    lines,
    row: { id, name, currency },
  };
}
