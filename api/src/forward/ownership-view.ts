import { statSync } from 'node:fs';
import {
  type Ownership,
  type OwnershipWriter,
  ownershipWriter,
  readOwnershipFile,
  servingWriter,
} from '@pda/projections/model';
import type { FastifyBaseLogger } from 'fastify';

/**
 * The ownership file as this api sees it now: read at start (config.ts refuses a bad one) and read
 * again when it changes (another inode, size or modification time, checked at most every
 * `checkEveryMs`), so moving partitions from one writer to another needs no api restart. A new
 * version that does not parse, or no longer names this writer, is not taken: the previous one
 * stays, with one warning per distinct problem.
 */
export interface OwnershipView {
  /** The writer whose api answers for a company, by the ownership in force now. */
  owner(companyId: string): OwnershipWriter;
  readonly self: string;
}

export function ownershipView(
  file: string,
  initial: Ownership,
  self: string,
  log: FastifyBaseLogger,
  now: () => number,
  checkEveryMs = 1_000,
): OwnershipView {
  // The identity is read before the content: the file may have changed since config.ts read
  // `initial`, and an identity taken after that change would hide it for good.
  let identity = fileIdentity(file);
  let ownership = initial;
  try {
    const current = readOwnershipFile(file);
    ownershipWriter(current, self);
    ownership = current;
  } catch {
    // Not usable now: keep `initial` and look again at the next check.
    identity = 'unread';
  }
  let checkedAt = now();
  let lastProblem: string | undefined;

  const refresh = (): void => {
    const at = now();
    if (at - checkedAt < checkEveryMs) return;
    checkedAt = at;
    const seen = fileIdentity(file);
    if (seen === identity) return;
    try {
      const next = readOwnershipFile(file);
      ownershipWriter(next, self);
      ownership = next;
      identity = seen;
      lastProblem = undefined;
      log.info(
        { writers: next.writers.map((w) => ({ name: w.name, serves: w.serves.length })) },
        'ownership file changed: now in force',
      );
    } catch (error) {
      const message = (error as Error).message;
      if (message !== lastProblem) {
        log.warn(
          { problem: message },
          'ownership file changed but is not usable: the previous one stays in force',
        );
        lastProblem = message;
      }
    }
  };

  return {
    self,
    owner(companyId) {
      refresh();
      return servingWriter(ownership, companyId);
    },
  };
}

function fileIdentity(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch (error) {
    return `missing:${(error as NodeJS.ErrnoException).code ?? ''}`;
  }
}
