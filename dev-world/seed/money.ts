// Money and areas are numeric(12,2): build them from integer cents so the text is exact.
import type { Rng } from './prng.ts';

/** 12345 → "123.45"; cents must be a safe, non-negative integer. */
export function centsToDecimal(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** A price between two whole amounts, rounded to a "price-like" step (whole, .50, .95, .99). */
export function priceBetween(rng: Rng, min: number, max: number): string {
  const whole = rng.int(min, max);
  const cents = rng.pick([0, 0, 0, 50, 95, 99, 25, 75]);
  return centsToDecimal(whole * 100 + cents);
}

/** A share (e.g. 0.55–0.8) of a decimal amount, rounded down to the cent, for subcontractor rates. */
export function shareOf(amount: string, rng: Rng, minPercent: number, maxPercent: number): string {
  const [whole = '0', frac = '00'] = amount.split('.');
  const cents = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  return centsToDecimal(Math.floor((cents * rng.int(minPercent, maxPercent)) / 100));
}
