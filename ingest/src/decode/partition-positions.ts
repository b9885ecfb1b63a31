/**
 * What the decoder has read so far in each partition, so that a tombstone whose `d` event the log
 * cleaner removed can still delete its row. On a compacted topic (ingest/README.md, Rebuild) the
 * cleaner drops a deleted key's `d` together with its older events and keeps the tombstone for a
 * while; a reader that had already read one of those older events (a rebuild under way while the
 * cleaner runs, a worker far behind) would otherwise keep the row.
 *
 * Such a delete is positioned at the highest LSN read so far in the partition + 1. Debezium writes a
 * partition in commit order, so every event before the tombstone belongs to a transaction committed
 * no later than the delete: all earlier versions of the row are at or below that position, and a
 * later re-insert of the same key (written after the delete committed) is above it. The position is
 * only known for what this decoder read itself: after a seek back or a redelivery, or before the
 * first event of a partition, the tombstone is ignored as before.
 */
import type { DecodeResult, RawRecord } from './types.ts';

export interface PartitionSeen {
  offset: number;
  /** Highest LSN of a decoded event (not of a tombstone-made delete); -1 before the first one. */
  maxLsn: number;
  tsMs: number;
  /** Key of the record just read when it was a `d` event: its tombstone then has nothing to do. */
  lastDeleteKey: string | undefined;
}

export const keyText = (key: Uint8Array | string): string =>
  typeof key === 'string' ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');

export class PartitionPositions {
  // By topic, then partition: no string built per record.
  private readonly seen = new Map<string, Map<number, PartitionSeen>>();

  /**
   * The partition's state before `record`, to be passed to `after`: a fresh one (nothing known)
   * before its first record and when `record` is not after the last one read (a seek back).
   */
  before(record: RawRecord): PartitionSeen {
    let partitions = this.seen.get(record.topic);
    if (!partitions) {
      partitions = new Map();
      this.seen.set(record.topic, partitions);
    }
    let seen = partitions.get(record.partition);
    if (!seen || Number(record.offset) <= seen.offset) {
      seen = { offset: -1, maxLsn: -1, tsMs: 0, lastDeleteKey: undefined };
      partitions.set(record.partition, seen);
    }
    return seen;
  }

  after(seen: PartitionSeen, record: RawRecord, result: DecodeResult): void {
    seen.offset = Number(record.offset);
    seen.lastDeleteKey = undefined;
    if (result.type !== 'change' || record.value === null) return;
    const { change } = result;
    if (change.position.lsn > seen.maxLsn) seen.maxLsn = change.position.lsn;
    seen.tsMs = change.position.tsMs;
    if (change.kind === 'delete' && record.key !== null) seen.lastDeleteKey = keyText(record.key);
  }
}
