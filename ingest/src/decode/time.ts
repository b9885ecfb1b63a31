/**
 * Debezium temporal encodings → ISO 8601 UTC strings with exactly 6 fractional digits
 * ('2026-01-31T12:00:00.123456Z'), the projection's timestamp format (projections/README.md).
 *
 * Decisions (documented in ingest/README.md):
 * - 7–9 fractional digits are TRUNCATED to microseconds, never rounded: PostgreSQL timestamps
 *   have microsecond resolution, truncation is monotonic and never moves a value into the next
 *   second/day.
 * - PostgreSQL's 'infinity' / '-infinity' (which Debezium passes through as those strings) map to
 *   the ends of the supported range, 9999-12-31T23:59:59.999999Z / 0001-01-01T00:00:00.000000Z,
 *   which keeps their ordering meaning (e.g. expires_at = infinity never expires).
 * - Any other instant outside years 0001–9999 is a decode error (dead letter).
 */
import { civilFromDays, daysFromCivil, daysInMonth } from './civil.ts';
import { fail } from './errors.ts';

export const MAX_TIMESTAMP = '9999-12-31T23:59:59.999999Z';
export const MIN_TIMESTAMP = '0001-01-01T00:00:00.000000Z';

const US_PER_DAY = 86_400_000_000n;

// java.time ISO_OFFSET_DATE_TIME output: seconds and fraction optional, offset Z or ±HH:MM[:SS].
const ZONED =
  /^([+-]?\d{4,9})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)$/;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Microseconds since the epoch (BigInt, exact) → ISO UTC with 6 fractional digits. */
export function isoFromEpochMicros(micros: bigint): string {
  let days = micros / US_PER_DAY;
  let rem = micros % US_PER_DAY;
  if (rem < 0n) {
    rem += US_PER_DAY;
    days -= 1n;
  }
  const { year, month, day } = civilFromDays(Number(days));
  if (year < 1 || year > 9999) fail(`timestamp outside years 0001-9999 (${micros} µs since epoch)`);
  const usOfDay = Number(rem); // < 8.64e10: exact as a number
  const seconds = Math.floor(usOfDay / 1_000_000);
  const us = usOfDay % 1_000_000;
  const hh = Math.floor(seconds / 3600);
  const mm = Math.floor((seconds % 3600) / 60);
  const ss = seconds % 60;
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}.${pad(us, 6)}Z`;
}

const digitAt = (text: string, i: number): number => {
  const d = text.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : Number.NaN;
};
const twoDigits = (text: string, i: number): number => digitAt(text, i) * 10 + digitAt(text, i + 1);

/** Are the date and time of 'YYYY-MM-DDTHH:MM:SS…' (at least 19 characters) well formed and valid? */
function validUtcPrefix(text: string): boolean {
  if (
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 || // T
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  ) {
    return false;
  }
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  return (
    year >= 1 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    twoDigits(text, 11) <= 23 &&
    twoDigits(text, 14) <= 59 &&
    twoDigits(text, 17) <= 59
  );
}

/** Are characters [from, to) all digits? */
function digitsBetween(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!(digitAt(text, i) >= 0)) return false;
  return true;
}

/**
 * Is `text` already the projection's form, 'YYYY-MM-DDTHH:MM:SS.ffffffZ' with a valid date and
 * time? What Debezium writes for timestamptz(6) columns: returned as is, checked by character codes
 * (no regex match, no new string).
 */
export function isCanonicalUtc(text: string): boolean {
  return (
    text.length === 27 &&
    text.charCodeAt(19) === 46 && // .
    text.charCodeAt(26) === 90 && // Z
    digitsBetween(text, 20, 26) &&
    validUtcPrefix(text)
  );
}

/**
 * A UTC value with 0–9 fractional digits ('…SSZ', '…SS.1234Z', what java.time prints when trailing
 * zeros are dropped) in the projection's form, or undefined when `text` is anything else.
 */
function utcWithFraction(text: string): string | undefined {
  const n = text.length;
  if (n < 20 || n > 30 || text.charCodeAt(n - 1) !== 90 || !validUtcPrefix(text)) return undefined;
  if (n === 20) return `${text.slice(0, 19)}.000000Z`;
  if (n === 21 || text.charCodeAt(19) !== 46 || !digitsBetween(text, 20, n - 1)) return undefined;
  const fraction = text.slice(20, n - 1); // 1–9 digits; 7–9 are truncated (see header)
  return `${text.slice(0, 19)}.${fraction.length >= 6 ? fraction.slice(0, 6) : fraction.padEnd(6, '0')}Z`;
}

/** io.debezium.time.ZonedTimestamp / IsoTimestamp string (0–9 fractional digits, any offset). */
export function isoFromZonedString(text: string): string {
  if (isCanonicalUtc(text)) return text;
  if (text === 'infinity') return MAX_TIMESTAMP;
  if (text === '-infinity') return MIN_TIMESTAMP;
  // Fast path: a valid UTC value only needs its fraction normalised (no calendar arithmetic).
  const utc = utcWithFraction(text);
  if (utc !== undefined) return utc;
  const m = ZONED.exec(text);
  if (!m) fail(`malformed zoned timestamp '${text.slice(0, 64)}'`);
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hh = Number(m[4]);
  const mi = Number(m[5]);
  const ss = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hh > 23 || mi > 59 || ss > 59) {
    fail(`invalid zoned timestamp '${text.slice(0, 64)}'`);
  }
  const fraction = (m[7] ?? '').padEnd(9, '0').slice(0, 6); // truncate 7–9 digits (see header)
  const offset = m[8] as string;
  let offsetSeconds = 0;
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const [oh, om, os] = offset.slice(1).split(':').map(Number);
    if ((oh ?? 0) > 18 || (om ?? 0) > 59 || (os ?? 0) > 59) fail(`invalid offset in '${text.slice(0, 64)}'`);
    offsetSeconds = sign * ((oh ?? 0) * 3600 + (om ?? 0) * 60 + (os ?? 0));
  }
  const localSeconds = daysFromCivil(year, month, day) * 86_400 + hh * 3600 + mi * 60 + ss;
  const utcSeconds = BigInt(localSeconds - offsetSeconds);
  return isoFromEpochMicros(utcSeconds * 1_000_000n + BigInt(Number(fraction)));
}

export type EpochUnit = 'ms' | 'us' | 'ns';

/** Timestamp (ms) / MicroTimestamp (µs) / NanoTimestamp (ns) integers → ISO UTC. */
export function isoFromEpoch(value: bigint, unit: EpochUnit): string {
  if (unit === 'ms') return isoFromEpochMicros(value * 1000n);
  if (unit === 'us') return isoFromEpochMicros(value);
  // ns → µs truncating toward the past (floor), consistent with the string truncation.
  let micros = value / 1000n;
  if (value % 1000n < 0n) micros -= 1n;
  return isoFromEpochMicros(micros);
}

/** io.debezium.time.Date / connect Date: days since the epoch → 'YYYY-MM-DD'. */
export function dateFromEpochDays(days: number): string {
  if (!Number.isSafeInteger(days)) fail(`date is not an integer day count: ${days}`);
  const { year, month, day } = civilFromDays(days);
  if (year < 1 || year > 9999) fail(`date outside years 0001-9999 (${days} days since epoch)`);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** io.debezium.time.IsoDate ('2024-01-31Z' or '2024-01-31') → 'YYYY-MM-DD'. */
export function dateFromIsoString(text: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:Z|[+-]\d{2}:\d{2})?$/.exec(text);
  const year = Number(m?.[1]);
  const month = Number(m?.[2]);
  const day = Number(m?.[3]);
  if (!m || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    fail(`malformed date '${text.slice(0, 64)}'`);
  }
  return `${m[1]}-${m[2]}-${m[3]}`;
}
