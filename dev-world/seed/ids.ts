// Row ids of the seed generator: a uuid (version-4 layout) made of 122 bits of SHA-256 over
// (seed, run, company index, table, row index).
//
// Why not the row's PRNG: its key is 32 bits, so ids drawn from it collide by the birthday bound
// (two companies of 60,000 contacts already share ids). Why a run: the same seed loaded twice into
// one database must not collide either, so the loader picks a fresh run unless told one; the data
// (names, prices, coordinates) still depends on the seed alone.
import { hash } from 'node:crypto';

/** The id space of one company of one run; rows derive their ids from it with `rowUuid`. */
export function companyIdSpace(seed: number | string, run: string, companyIndex: number): string {
  // JSON keeps (seed, run) unambiguous whatever characters they contain.
  const namespace = hash('sha256', JSON.stringify(['pda-seed', String(seed), run]), 'hex');
  return `${namespace}/${companyIndex}`;
}

/** The id of row `index` of `table` in a company's id space; the company's own id is `companies` row 0. */
export function rowUuid(idSpace: string, table: string, index: number): string {
  const hex = hash('sha256', `${idSpace}/${table}/${index}`, 'hex');
  const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
