// Small file systems the storage-fault cases mount under a temp dir as ingest's data directory (we
// run as root): a size-limited tmpfs to fill, or a loop-mounted ext4 image with errors=remount-ro
// that the kernel turns read-only on request (trigger_fs_error, as after a real file-system error).
// Each is unmounted in teardown. Also: filling a file system to the last block, and SQLite's
// integrity check over every projection file of a data directory.
import { execFile } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { openReader } from '@pda/projections/model';
import { pause } from '../../src/pause.ts';
import { kafkaClient, waitFor } from '../../src/stack-env.ts';
import type { IngestProcess } from './ingest-process.ts';

const run = promisify(execFile);

export interface Mounted {
  readonly mountPoint: string;
  /** The data directory inside the mount (created). */
  readonly dataDir: string;
  unmount(): Promise<void>;
}

/** A tmpfs of `sizeMb` MiB. */
export async function mountTmpfs(label: string, sizeMb: number): Promise<Mounted> {
  const mountPoint = mkdtempSync(join(tmpdir(), `fault-${label}-`));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', mountPoint]);
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir);
  return { mountPoint, dataDir, unmount: () => unmountAll(mountPoint) };
}

export interface Ext4Mount extends Mounted {
  /** The kernel's own reaction to a file-system error: remounted read-only (emergency_ro). */
  failReadOnly(): Promise<void>;
  /** What an operator does after it: unmount (retried until ingest has let go), fsck, mount again. */
  repair(): Promise<{ unmountSeconds: number }>;
}

/** A loop-mounted ext4 image of `sizeMb` MiB, mounted with errors=remount-ro. */
export async function mountExt4(label: string, sizeMb: number): Promise<Ext4Mount> {
  const base = mkdtempSync(join(tmpdir(), `fault-${label}-`));
  const image = join(base, 'fs.img');
  const mountPoint = join(base, 'mnt');
  mkdirSync(mountPoint);
  await run('truncate', ['-s', `${sizeMb}M`, image]);
  await run('mkfs.ext4', ['-q', '-F', image]);
  const mount = () => run('mount', ['-o', 'loop,errors=remount-ro', image, mountPoint]);
  await mount();
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir);
  const device = async () =>
    basename((await run('findmnt', ['-n', '-o', 'SOURCE', mountPoint])).stdout.trim());
  return {
    mountPoint,
    dataDir,
    async failReadOnly() {
      await run('sh', ['-c', `echo 1 > /sys/fs/ext4/${await device()}/trigger_fs_error`]);
    },
    async repair() {
      const started = Date.now();
      // ingest closes its files after each failed write; between its retries nothing is open.
      await waitFor(
        'the file system to unmount (ingest has closed its files)',
        async () => {
          await run('umount', [mountPoint]);
          return true;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      const unmountSeconds = (Date.now() - started) / 1000;
      // e2fsck exits 1 when it fixed something (the error flag), which is the expected outcome.
      await run('e2fsck', ['-fy', image]).catch((error: { code?: number }) => {
        if (error.code !== 1) throw error;
      });
      await mount();
      return { unmountSeconds };
    },
    async unmount() {
      await unmountAll(mountPoint);
      rmSync(base, { recursive: true, force: true });
    },
  };
}

async function unmountAll(mountPoint: string): Promise<void> {
  // Lazy: a process that still holds a file (a failed test) must not keep the mount forever.
  await run('umount', ['-l', mountPoint]).catch(() => undefined);
  rmSync(mountPoint, { recursive: true, force: true });
}

/** Writes `path` until the file system is full (ENOSPC), to the last block; returns bytes written. */
export function fillUp(path: string): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (error) {
          if ((error as { code?: string }).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** PRAGMA integrity_check of control.sqlite and every company file (read-only); the failures. */
export function integrityProblems(dataDir: string): string[] {
  const files = [join(dataDir, 'control.sqlite')];
  const companies = join(dataDir, 'companies');
  if (existsSync(companies)) {
    for (const name of readdirSync(companies))
      if (name.endsWith('.sqlite')) files.push(join(companies, name));
  }
  const problems: string[] = [];
  for (const file of files) {
    const db = openReader(file);
    try {
      const result = db.pragma('integrity_check', { simple: true });
      if (result !== 'ok') problems.push(`${basename(file)}: ${String(result)}`);
    } finally {
      db.close();
    }
  }
  return problems;
}

/** ingest's /readyz, as far as the storage cases read it. */
export interface StorageReadyz {
  status: string;
  lag: number | null;
  storage: { status: string; since?: string; error?: string; failures?: number };
}

/** The group's committed offsets, summed over the connector's data partitions. */
export async function committedTotal(groupId: string, prefix: string): Promise<number> {
  const admin = kafkaClient(`fault-offsets-${groupId}`).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.public.`));
    const offsets = await admin.fetchOffsets({ groupId, topics });
    return offsets.flatMap((t) => t.partitions).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * What was applied before a fault is still committed for up to ~1 s after it: ingest commits offsets
 * only after flushing the file system, at most once a second (ingest/src/batch/durability.ts). The
 * "no offset moves during the fault" check starts after this, so it sees only commits the fault
 * should have stopped.
 */
export const COMMITS_SETTLE_MS = 2_500;

/** ingest's /readyz on its admin port `port`. */
export const storageReadyz = (port: number) => async () =>
  (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as StorageReadyz;

/** What a case reads while its storage fault holds. */
export interface WhileFaulted {
  readonly readyz: StorageReadyz;
  /** pda_ingest_storage_fault of the fault's kind. */
  readonly faultMetric: number;
  /** The group's committed offsets COMMITS_SETTLE_MS into the fault, and at its end. */
  readonly committedBefore: number;
  readonly committedAfter: number;
}

/**
 * A storage fault made at `since` (epoch ms), held: waits until ingest's /readyz reports the storage
 * status `kind` (that answer is `faulted`, `detectSeconds` the time from `since`), then keeps the
 * fault for `holdMs`, reading the group's committed offsets COMMITS_SETTLE_MS in and at the end,
 * then /readyz and pda_ingest_storage_fault{kind} once more. The caller then repairs the fault.
 */
export async function holdStorageFault(
  ingest: IngestProcess,
  readyz: () => Promise<StorageReadyz>,
  options: {
    readonly kind: 'full' | 'read_only';
    readonly since: number;
    readonly detectTimeoutMs: number;
    readonly holdMs: number;
    readonly groupId: string;
    readonly topicPrefix: string;
  },
): Promise<{ faulted: StorageReadyz; detectSeconds: number; whileFaulted: WhileFaulted }> {
  const faulted = await waitFor(
    `/readyz storage ${options.kind}`,
    async () => {
      const body = await readyz();
      return body.storage.status === options.kind && body;
    },
    { timeoutMs: options.detectTimeoutMs, intervalMs: 100 },
  );
  const detectSeconds = (Date.now() - options.since) / 1000;
  await pause(COMMITS_SETTLE_MS);
  const committedBefore = await committedTotal(options.groupId, options.topicPrefix);
  await pause(options.holdMs - COMMITS_SETTLE_MS);
  const committedAfter = await committedTotal(options.groupId, options.topicPrefix);
  const whileFaulted = {
    readyz: await readyz(),
    faultMetric: await ingest.metric('pda_ingest_storage_fault', `kind="${options.kind}"`),
    committedBefore,
    committedAfter,
  };
  return { faulted, detectSeconds, whileFaulted };
}

/** Until ingest's /readyz says its storage is ok again (after 3 s of applying without a failure). */
export const storageOkAgain = (readyz: () => Promise<StorageReadyz>) =>
  waitFor('/readyz storage ok', async () => (await readyz()).storage.status === 'ok', {
    timeoutMs: 60_000,
    intervalMs: 100,
  });

/** ingest's log lines of a storage case: its pauses, its resumes and any per-partition apply failure. */
export function storageLines(ingest: IngestProcess) {
  return {
    paused: ingest.lines.filter((l) => String(l.msg).startsWith('applying paused')),
    resumed: ingest.lines.filter(
      (l) => l.msg === 'applying resumed: the data directory accepts writes again',
    ),
    perPartition: ingest.lines.filter((l) => l.msg === 'apply failed; partition paused'),
  };
}
