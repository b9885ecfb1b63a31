// Sites (with addresses and coordinates around the company's cities) and their contacts.
import type { CompanyProfile } from './company-profile.ts';
import { formatMicrodegrees, phoneNumber, postalCode } from './geo.ts';
import { rowUuid } from './ids.ts';
import { centsToDecimal } from './money.ts';
import { CONTACT_ROLES, FIRST_NAMES, LAST_NAMES, PHONE_TYPES } from './people-words.ts';
import {
  COORDINATE_ACCURACIES,
  NOTE_SENTENCES,
  NUMBER_FIRST,
  SITE_AREAS_SUFFIX,
  SITE_KINDS,
  SITE_NAME_PARTS,
  STREETS,
} from './place-words.ts';
import { deriveKey, type Rng, rowRng } from './prng.ts';
import type { SiteContactRow, SiteRow } from './rows.ts';
import { slug } from './text.ts';

// geocoded_at falls in 2023-01-01 .. 2025-07-01 UTC, with microseconds (timestamptz precision) so
// consumers see real fractional seconds.
const GEOCODED_FROM_S = Date.UTC(2023, 0, 1) / 1000;
const GEOCODED_SPAN_S = (Date.UTC(2025, 6, 1) - Date.UTC(2023, 0, 1)) / 1000;

function isoMicros(rng: Rng): string {
  const seconds = GEOCODED_FROM_S + rng.int(0, GEOCODED_SPAN_S - 1);
  const micros = String(rng.int(0, 999_999)).padStart(6, '0');
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${micros}Z`;
}

function notes(rng: Rng): string {
  const roll = rng.float();
  if (roll < 0.4) return '';
  // About one site in 200 carries a long note (> 2 kB), which PostgreSQL TOASTs: unchanged TOASTed
  // columns reach Debezium as __debezium_unavailable_value on later updates.
  const sentences = roll > 0.995 ? rng.int(120, 200) : rng.int(1, 3);
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(rng.pick(NOTE_SENTENCES));
  return out.join(' ');
}

export function* generateSites(company: CompanyProfile, count: number): Generator<SiteRow> {
  const key = deriveKey(company.key, 'sites');
  const country = company.country;
  for (let i = 0; i < count; i++) {
    const rng = rowRng(key, i);
    const id = rowUuid(company.idSpace, 'sites', i);
    const city = rng.pick(company.cities);
    const part = rng.pick(SITE_NAME_PARTS);
    const kind = rng.pick(SITE_KINDS);
    const number = rng.int(1, NUMBER_FIRST[country] ? 9800 : 180);
    const street = rng.pick(STREETS[country]);
    const geocoded = rng.chance(0.93);
    // Spread sites over the metro area: about ±13 km north-south, ±14–20 km east-west.
    const lat = city.lat + rng.int(-120_000, 120_000);
    const lon = city.lon + rng.int(-180_000, 180_000);
    yield {
      id,
      company_id: company.id,
      name: `${part} ${kind}${rng.pick(SITE_AREAS_SUFFIX)}`,
      name_for_operators: `${part.split(' ')[0]} ${kind.split(' ')[0]} ${i + 1}`,
      site_reference: `S-${String(i + 1).padStart(6, '0')}`,
      client_reference: rng.chance(0.7) ? `PO-${rng.int(1000, 99999)}` : '',
      client_company_id: rng.chance(0.5) ? `CUST-${rng.int(100, 9999)}` : '',
      notes: notes(rng),
      area: rng.chance(0.9) ? centsToDecimal(rng.int(150_00, 60_000_00)) : null,
      address_line1: NUMBER_FIRST[country] ? `${number} ${street}` : `${street} ${number}`,
      address_line2: rng.chance(0.2) ? rng.pick(['Suite 200', 'Unit 4', 'Building B', 'Rear lot']) : '',
      city: city.name,
      region: city.region,
      postal_code: postalCode(rng, country, city),
      country,
      latitude: geocoded ? formatMicrodegrees(lat) : null,
      longitude: geocoded ? formatMicrodegrees(lon) : null,
      coordinates_accuracy: geocoded ? rng.pick(COORDINATE_ACCURACIES) : null,
      geocoded_at: geocoded ? isoMicros(rng) : null,
    };
  }
}

export function* generateContacts(
  company: CompanyProfile,
  siteCount: number,
  perSite: number,
): Generator<SiteContactRow> {
  const key = deriveKey(company.key, 'site_contacts');
  const country = company.country;
  for (let s = 0; s < siteCount; s++) {
    const siteId = rowUuid(company.idSpace, 'sites', s);
    for (let j = 0; j < perSite; j++) {
      const rng = rowRng(key, s * perSite + j);
      const id = rowUuid(company.idSpace, 'site_contacts', s * perSite + j);
      const first = rng.pick(FIRST_NAMES[country]);
      const last = rng.pick(LAST_NAMES[country]);
      const phoneType = rng.pick(PHONE_TYPES);
      const domain = `${slug(rng.pick(SITE_NAME_PARTS))}-property.example`;
      const city = rng.pick(company.cities);
      yield {
        id,
        company_id: company.id,
        site_id: siteId,
        name: `${first} ${last}`,
        role: rng.pick(CONTACT_ROLES),
        email: rng.chance(0.9) ? `${slug(first)}.${slug(last)}@${domain}` : '',
        phone: rng.chance(0.95) ? phoneNumber(rng, country, city, phoneType === 'mobile') : '',
        phone_type: phoneType,
      };
    }
  }
}
