/**
 * Group commit: items submitted while earlier groups are still being committed wait, and are then
 * merged and committed together. For ingest this turns many decoded chunks (from one partition or
 * several) into ONE apply call — one SQLite transaction per company for the whole group instead of
 * per chunk — which is what makes the apply thread fast: a company transaction costs about as much
 * as a few dozen row writes (bench/README.md, ingest).
 *
 * Order is kept: groups are formed from the queue head and committed in submission order (the
 * apply thread applies its requests strictly in arrival order). Every submitter's promise settles
 * with its group's outcome: resolved only after the whole group committed, rejected if it failed.
 */

export interface GroupCommitOptions<T, R> {
  /** Merges queued items (in submission order) into one. Called only for two or more items. */
  merge(items: readonly T[]): T;
  /** Size of an item, in the unit of maxGroupSize (events). */
  size(item: T): number;
  commit(group: T): Promise<R>;
  /**
   * A group grows until it reaches this size (an item larger than it still forms its own group);
   * a function is read each time a group is formed.
   */
  readonly maxGroupSize: number | (() => number);
  /**
   * Groups handed to `commit` and not yet settled: 1 makes groups as large as the backlog allows;
   * 2 keeps the next group queued in the apply thread's port while the current one is applied.
   */
  readonly maxInFlight: number;
}

export interface GroupCommitter<T, R> {
  submit(item: T): Promise<R>;
  /** Items waiting plus groups in flight (0 = idle). */
  pending(): number;
}

interface Waiting<T, R> {
  readonly item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export function createGroupCommitter<T, R>(options: GroupCommitOptions<T, R>): GroupCommitter<T, R> {
  if (options.maxInFlight < 1) throw new RangeError('maxInFlight must be at least 1');
  const queue: Waiting<T, R>[] = [];
  let inFlight = 0;

  const maxGroupSize =
    typeof options.maxGroupSize === 'function' ? options.maxGroupSize : () => options.maxGroupSize as number;

  function takeGroup(): Waiting<T, R>[] {
    const group: Waiting<T, R>[] = [];
    const max = maxGroupSize();
    let size = 0;
    while (queue.length > 0) {
      const next = queue[0] as Waiting<T, R>;
      const nextSize = options.size(next.item);
      if (group.length > 0 && size + nextSize > max) break;
      group.push(next);
      queue.shift();
      size += nextSize;
    }
    return group;
  }

  function pump(): void {
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const group = takeGroup();
      inFlight++;
      let committed: Promise<R>;
      try {
        const merged =
          group.length === 1 ? (group[0] as Waiting<T, R>).item : options.merge(group.map((w) => w.item));
        committed = options.commit(merged);
      } catch (error) {
        committed = Promise.reject(error);
      }
      committed
        .then(
          (result) => {
            for (const w of group) w.resolve(result);
          },
          (error: unknown) => {
            for (const w of group) w.reject(error);
          },
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
    pending: () => queue.length + inFlight,
  };
}
