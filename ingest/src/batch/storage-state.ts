/**
 * Whether the projections' storage lets ingest apply: `ok`, or the fault that stops it — the data
 * directory full, read-only or failing (@pda/projections classifyFault, refined on the directory
 * itself by probeStorage). While faulted every partition retries its chunk every `retryMs` (the
 * writer closed its files, so the retry also reopens them); Kafka offsets stay at what was applied.
 *
 * One warning when a fault starts and one line when applying works again, with how long it lasted:
 * the per-partition failures in between are not logged again (a full disk would otherwise log one
 * line per partition per retry). A nearly full disk flaps — a small batch still fits in the WAL's
 * reused space, the next one does not — so the fault ends only after `quietMs` without a failure
 * since the first apply that worked again (measured: a 48 MiB tmpfs filled to its last block gave
 * one success 5.7 s into the fault). /readyz carries it as `storage`; pda_ingest_storage_fault{kind} is
 * 1 for the current fault.
 */
import { probeStorage, type StorageFaultKind, storageFaultOf } from '@pda/projections/model';
import type { Logger } from 'pino';
import type { IngestMetrics } from '../observability/metrics.ts';

export interface StorageHealth {
  readonly status: 'ok' | StorageFaultKind;
  /** ISO time the fault started. */
  readonly since?: string;
  readonly error?: string;
  /** Apply calls that failed on it so far. */
  readonly failures?: number;
}

export interface StorageState {
  /** An apply failed: true when it is a storage fault (then logged here, once per fault). */
  failed(error: unknown): boolean;
  /** An apply committed: ends a fault. */
  applied(): void;
  faulted(): boolean;
  health(): StorageHealth;
  /** How long a partition waits before retrying while the storage is faulted. */
  readonly retryMs: number;
}

const KINDS: readonly StorageFaultKind[] = ['full', 'read_only', 'io'];

const ADVICE: Readonly<Record<StorageFaultKind, string>> = {
  full: 'the data directory is full: free space or grow the volume; applying resumes by itself',
  read_only:
    'the data directory is read-only: remount it read-write (after a file-system error: fsck first; ingest has closed its files); applying resumes by itself',
  io: 'the data directory fails with I/O errors: check the disk and the kernel log; applying resumes by itself once writes succeed',
};

export function createStorageState(deps: {
  dataDir: () => string;
  logger: Logger;
  metrics: IngestMetrics;
  retryMs?: number;
  quietMs?: number;
  now?: () => number;
}): StorageState {
  const now = deps.now ?? Date.now;
  const quietMs = deps.quietMs ?? 3_000;
  let fault:
    | {
        kind: StorageFaultKind;
        sinceMs: number;
        error: string;
        failures: number;
        lastFailureMs: number;
        /** The first apply that worked after the last failure. */
        workedAtMs: number | undefined;
      }
    | undefined;
  const gauge = (current: StorageFaultKind | undefined) => {
    for (const kind of KINDS) deps.metrics.storageFault.set({ kind }, kind === current ? 1 : 0);
  };
  gauge(undefined);

  /** Ends the fault once applying has worked for `quietMs` without a failure. */
  function settle(): undefined {
    if (!fault || fault.workedAtMs === undefined || now() - fault.lastFailureMs < quietMs) return;
    deps.logger.info(
      {
        storage: fault.kind,
        pausedSeconds: (fault.workedAtMs - fault.sinceMs) / 1000,
        failures: fault.failures,
        resumedAt: new Date(fault.workedAtMs).toISOString(),
      },
      'applying resumed: the data directory accepts writes again',
    );
    fault = undefined;
    gauge(undefined);
  }

  return {
    retryMs: deps.retryMs ?? 2_000,
    failed(error) {
      const classified = storageFaultOf(error);
      if (classified === undefined) return false;
      // SQLite reports a write refused by a read-only remount as an I/O error: ask the directory.
      const kind = classified === 'io' ? probeStorage(deps.dataDir(), 'io') : classified;
      const message = error instanceof Error ? error.message : String(error);
      if (fault && fault.kind === kind) {
        fault.failures++;
        fault.lastFailureMs = now();
        fault.workedAtMs = undefined;
        return true;
      }
      fault = {
        kind,
        sinceMs: now(),
        error: message,
        failures: 1,
        lastFailureMs: now(),
        workedAtMs: undefined,
      };
      gauge(kind);
      deps.logger.warn(
        { storage: kind, err: message, dataDir: deps.dataDir() },
        `applying paused: ${ADVICE[kind]} (Kafka offsets stay at what was applied)`,
      );
      return true;
    },
    applied() {
      if (!fault) return;
      fault.workedAtMs ??= now();
      settle();
    },
    faulted: () => {
      settle();
      return fault !== undefined;
    },
    health: () => {
      settle();
      return fault
        ? {
            status: fault.kind,
            since: new Date(fault.sinceMs).toISOString(),
            error: fault.error,
            failures: fault.failures,
          }
        : { status: 'ok' };
    },
  };
}
