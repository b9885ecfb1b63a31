/**
 * A secret read once at start from a file (`INGEST_*_PASSWORD_FILE`): never from the environment or
 * a command line, which `ps`, `/proc/<pid>/environ` and crash reports show. The value is reachable
 * only through `reveal()`; logging or printing the configuration shows the file's path instead.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

export class SecretFile {
  readonly file: string;
  readonly #value: string;

  constructor(file: string, value: string) {
    this.file = file;
    this.#value = value;
  }

  /** The secret itself, for the one client that sends it. */
  reveal(): string {
    return this.#value;
  }

  /** JSON (pino, a printed configuration) names the file, never the secret. */
  toJSON(): { file: string } {
    return { file: this.file };
  }

  [inspect.custom](): string {
    return `SecretFile(${this.file})`;
  }
}

/**
 * Reads the file; surrounding whitespace (a final newline) is dropped. Throws one line naming the
 * file (never its content) when it is unreadable or empty.
 */
export function readSecretFile(file: string): SecretFile {
  const value = readTrimmedFile(file);
  if (value.length === 0) throw new Error(`${file} is empty`);
  if (/[\r\n]/.test(value)) throw new Error(`${file} must hold one line`);
  return new SecretFile(file, value);
}

/** A secret file's text without surrounding whitespace; throws one line naming the file (admin-token.ts too). */
export function readTrimmedFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}
