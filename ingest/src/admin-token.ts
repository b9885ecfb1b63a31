/**
 * The admin port's token (INGEST_ADMIN_TOKEN_FILE, ingest/README.md "Operations: admin port"): a
 * secret read once at start from a file (never from the environment or a command line, which `ps`
 * and crash reports show), required as `Authorization: Bearer <token>` by the operations that
 * change state (POST /rebuild) and by the answers that name companies (GET /rebuild, the company
 * lists of /readyz). The rebuild command reads the same setting to call the port.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readTrimmedFile } from './secret-file.ts';

/** As long as `openssl rand -hex 16`; what `openssl rand -hex 32` writes passes with room. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

export class AdminToken {
  readonly file: string;
  readonly #value: string;
  readonly #digest: Buffer;

  constructor(file: string, value: string) {
    this.file = file;
    this.#value = value;
    this.#digest = sha256(value);
  }

  /**
   * Whether an `Authorization` header carries this token. Constant time: both sides are hashed to
   * 32 bytes before timingSafeEqual, so neither the token's length nor a matching prefix shows in
   * the time of a refusal.
   */
  accepts(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    // No header: the empty string, whose digest no token of MIN_ADMIN_TOKEN_LENGTH has.
    return timingSafeEqual(sha256(match?.[1] ?? ''), this.#digest);
  }

  /** The header the rebuild command sends (rebuild-main.ts). */
  authorization(): string {
    return `Bearer ${this.#value}`;
  }

  /** A logged or printed configuration names the file, never the token. */
  toJSON(): { file: string } {
    return { file: this.file };
  }
}

/** Reads the token file: surrounding whitespace (a final newline) is dropped. Throws one line. */
export function readAdminToken(file: string): AdminToken {
  const value = readTrimmedFile(file);
  if (!/^[\x21-\x7e]+$/.test(value) || value.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `${file} must hold one token of at least ${MIN_ADMIN_TOKEN_LENGTH} visible ASCII characters (e.g. openssl rand -hex 32)`,
    );
  }
  return new AdminToken(file, value);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
