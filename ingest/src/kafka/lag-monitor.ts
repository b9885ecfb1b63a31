/**
 * Consumer lag per partition = high watermark − next offset to apply. The next offset is what this
 * process applied (updated after each committed chunk) or, for partitions it has not touched yet,
 * the group's committed offset. Polled with the admin client so an idle consumer still knows it is
 * caught up (readiness) and a stalled one shows its growing lag.
 */
import type { KafkaAdmin } from './client.ts';

export interface LagSnapshot {
  readonly measured: boolean;
  readonly total: number;
  readonly partitions: ReadonlyArray<{ topic: string; partition: number; lag: number }>;
}

export class LagMonitor {
  private readonly high = new Map<string, number>();
  private readonly next = new Map<string, number>();
  private measured = false;

  private readonly admin: KafkaAdmin;
  private readonly groupId: string;
  private readonly topics: readonly string[];

  private readonly owns: (topic: string, partition: number) => boolean;

  /**
   * `owns`: the partitions counted (a split writer's own, kafka/writer-ownership.ts); others are neither
   * polled into the lag nor reported. Default: every partition.
   */
  constructor(
    admin: KafkaAdmin,
    groupId: string,
    topics: readonly string[],
    owns: (topic: string, partition: number) => boolean = () => true,
  ) {
    this.admin = admin;
    this.groupId = groupId;
    this.topics = topics;
    this.owns = owns;
  }

  /** After a chunk's transactions committed: `offset` was applied. */
  applied(topic: string, partition: number, offset: string, highWatermark: string): void {
    this.next.set(`${topic}\u0000${partition}`, Number(offset) + 1);
    this.high.set(`${topic}\u0000${partition}`, Number(highWatermark));
  }

  async poll(): Promise<void> {
    const committed = await this.admin.groupOffsets(this.groupId, this.topics);
    for (const topic of this.topics) {
      const offsets = await this.admin.topicOffsets(topic);
      for (const p of offsets) {
        if (!this.owns(topic, p.partition)) continue;
        const id = `${topic}\u0000${p.partition}`;
        this.high.set(id, Number(p.high));
        const c = committed.find((x) => x.topic === topic && x.partition === p.partition);
        const committedNext = c && Number(c.offset) >= 0 ? Number(c.offset) : Number(p.low);
        this.next.set(id, Math.max(this.next.get(id) ?? 0, committedNext));
      }
    }
    this.measured = true;
  }

  /**
   * The high watermark of every counted partition now (one admin request per topic), recorded as
   * polled: what a heartbeat's confirmation waits for (heartbeat-watch.ts).
   */
  async highWatermarks(): Promise<ReadonlyMap<string, number>> {
    const marks = new Map<string, number>();
    for (const topic of this.topics) {
      for (const p of await this.admin.topicOffsets(topic)) {
        if (!this.owns(topic, p.partition)) continue;
        const id = `${topic}\u0000${p.partition}`;
        marks.set(id, Number(p.high));
        this.high.set(id, Math.max(this.high.get(id) ?? 0, Number(p.high)));
      }
    }
    return marks;
  }

  /** Whether every partition of `marks` is applied (or was committed) up to its mark. */
  reached(marks: ReadonlyMap<string, number>): boolean {
    for (const [id, mark] of marks) if ((this.next.get(id) ?? 0) < mark) return false;
    return true;
  }

  snapshot(): LagSnapshot {
    const partitions = [...this.high].map(([id, high]) => {
      const [topic = '', partition = '0'] = id.split('\u0000');
      return { topic, partition: Number(partition), lag: Math.max(0, high - (this.next.get(id) ?? 0)) };
    });
    return { measured: this.measured, total: partitions.reduce((sum, p) => sum + p.lag, 0), partitions };
  }
}
