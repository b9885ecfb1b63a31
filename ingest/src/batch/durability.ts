/**
 * The projection files are written with synchronous=NORMAL: a commit reaches the OS, not the disk,
 * and the WAL is fsynced only at checkpoints (cheap: one fsync per checkpoint, not per company per
 * group). Committing a Kafka offset says "applied, never redeliver"; if the machine loses power or the
 * file system dies (an emergency read-only remount drops unwritten pages) before the OS wrote those
 * pages, the rows are gone and Kafka would not send them again.
 *
 * So offsets are committed only behind a barrier: one `sync --file-system` of the data directory's
 * file system, started after the commits the offsets cover. One syscall (syncfs) flushes every
 * company file at once, which no per-file fsync could do as cheaply; callers that arrive while a
 * flush runs share the next one, so the commit loop pays at most one flush per round.
 */
import { execFile } from 'node:child_process';

export type DurabilityBarrier = () => Promise<void>;

/**
 * At most one flush a second: each is a process (`sync`) and a burst of writeback, and one per
 * commit round cost more. Offsets are then committed up to a second later, which only widens what a
 * crash replays. The price of durability that remains is a few percent of the steady rate (paired
 * bench/ingest/throughput.ts runs with and without the barrier, in ingest/README.md "Offsets wait
 * for the disk"): pages written back now that the kernel would have rewritten in place before
 * writing them once.
 */
const FLUSH_INTERVAL_MS = 1000;

/** Flushes the file system of `dataDir`; rejects when the flush failed (nothing may be committed). */
export function createDurabilityBarrier(
  dataDir: string,
  flush: () => Promise<void> = () => syncFileSystem(dataDir),
  minIntervalMs = FLUSH_INTERVAL_MS,
): DurabilityBarrier {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  let lastStartedAt = Number.NEGATIVE_INFINITY;
  const spaced = async () => {
    const wait = lastStartedAt + minIntervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    lastStartedAt = Date.now();
    return flush();
  };
  return () => {
    // A flush already running may have started before the caller's commits: wait for the next one.
    if (queued) return queued;
    if (!running) {
      running = spaced().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued = running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        running = spaced().finally(() => {
          running = undefined;
        });
        return running;
      });
    return queued;
  };
}

/** `sync --file-system` (coreutils; syncfs(2)): every dirty page of the file system holding `path`. */
export function syncFileSystem(path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    execFile('sync', ['--file-system', path], { timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`sync --file-system ${path} failed: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}
