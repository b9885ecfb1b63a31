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

/** Flushes the file system of `dataDir`; rejects when the flush failed (nothing may be committed). */
export function createDurabilityBarrier(
  dataDir: string,
  flush: () => Promise<void> = () => syncFileSystem(dataDir),
): DurabilityBarrier {
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  return () => {
    // A flush already running may have started before the caller's commits: wait for the next one.
    if (queued) return queued;
    if (!running) {
      running = flush().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued = running
      .catch(() => {})
      .then(() => {
        queued = undefined;
        running = flush().finally(() => {
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
