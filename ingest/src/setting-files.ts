/**
 * Settings that name a file (`INGEST_*_FILE`): passwords, certificates and keys, read once with the
 * configuration, so a missing or wrong file is a configuration error at start (one line, exit 2), not
 * a TLS or authentication failure minutes later. Passwords and private keys are SecretFiles: printed
 * or logged, they show their path only.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { readSecretFile, SecretFile } from './secret-file.ts';

export interface PemFile {
  readonly file: string;
  readonly pem: string;
  /** Logged as its path: certificates are public, but hundreds of lines of PEM help no one. */
  toJSON(): { file: string };
}

function readPem(file: string, label: RegExp, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (!label.test(text)) throw new Error(`${file} holds no PEM ${what}`);
  return text;
}

/** Reads a setting's file inside the schema, so a bad file is reported like any bad setting. */
export function fileSetting<T>(read: (file: string) => T) {
  return z
    .string()
    .min(1)
    .optional()
    .transform((file, ctx): T | undefined => {
      if (file === undefined) return undefined;
      try {
        return read(file);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
}

/** One or more PEM certificates (a CA bundle, a client certificate with its chain). */
export const certificatesFile = () =>
  fileSetting<PemFile>((file) => ({
    file,
    pem: readPem(file, /-----BEGIN CERTIFICATE-----/, 'certificate'),
    toJSON: () => ({ file }),
  }));

/** A PEM private key (PKCS#8, PKCS#1 or SEC1, unencrypted). */
export const privateKeyFile = () =>
  fileSetting<SecretFile>(
    (file) => new SecretFile(file, readPem(file, /-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'private key')),
  );

/** A password or similar one-line secret. */
export const secretFile = () => fileSetting<SecretFile>(readSecretFile);
