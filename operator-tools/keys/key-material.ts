// What an API key is made of. The key is shown once; the database keeps only its SHA-256 (hex),
// the fixed prefix and the last four characters, from which the public identifier is built.
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'svc_pk_';

export interface KeyMaterial {
  /** the secret, e.g. svc_pk_3q2-… (7 + 43 characters); never stored, never logged */
  key: string;
  sha256: string;
  prefix: string;
  lastFour: string;
}

/** SHA-256 of the whole key as lowercase hex: what the api looks up. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** `svc_pk_…abcd`: the only form in which a key may be shown after it was issued. */
export function keyIdentifier(prefix: string, lastFour: string): string {
  return `${prefix}\u2026${lastFour}`;
}

/** 32 random bytes → 43 url-safe base64 characters (256 bits of entropy). */
export function newKeyMaterial(): KeyMaterial {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, sha256: hashApiKey(key), prefix: KEY_PREFIX, lastFour: key.slice(-4) };
}
