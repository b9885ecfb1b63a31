/**
 * Chunks handed to the apply side and not yet known to be committed in SQLite, per partition.
 *
 * The client is told a chunk is handed over (BatchControl.handedOver) at once, so it fetches
 * the next records while the apply thread works (its fetcher waits for the batch callback to return). What
 * may be committed to Kafka is decided here instead: per partition, the end of the run of chunks,
 * in submission order, that are all applied. A failed chunk blocks its partition until the records
 * are delivered again from the failed chunk's first offset (the caller seeks there), so a later
 * chunk that did apply can never carry the committed offset over records that did not.
 */

export interface Ticket {
  readonly topic: string;
  readonly partition: number;
  readonly first: string;
  readonly last: string;
  readonly events: number;
  readonly epoch: number;
  applied: boolean;
}

export interface CommitOffset {
  readonly topic: string;
  readonly partition: number;
  /** Kafka's committed offset: the next one to read (last applied + 1). */
  readonly offset: string;
}

interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Bumped by a failure: tickets of an older epoch no longer count. */
  epoch: number;
  readonly tickets: Ticket[];
  /** After a failure: only a chunk starting at or before this offset is accepted. */
  blockedFrom: bigint | undefined;
  /** Next offset after the applied run, and what was last committed to Kafka. */
  appliedUpTo: bigint | undefined;
  committed: bigint | undefined;
}

export class InFlightChunks {
  readonly #partitions = new Map<string, PartitionState>();
  #events = 0;
  #waiters: { limit: number; resolve(): void }[] = [];

  /** Events handed over and not yet applied (or dropped by a failure). */
  events(): number {
    return this.#events;
  }

  /**
   * Registers a chunk about to be handed over; undefined when its partition is blocked by a failure
   * and the chunk does not start where the records must be delivered again (do not hand it over).
   */
  add(topic: string, partition: number, first: string, last: string, events: number): Ticket | undefined {
    const state = this.#state(topic, partition);
    if (state.blockedFrom !== undefined) {
      if (BigInt(first) > state.blockedFrom) return undefined;
      state.blockedFrom = undefined;
    }
    const ticket: Ticket = { topic, partition, first, last, events, epoch: state.epoch, applied: false };
    state.tickets.push(ticket);
    this.#events += events;
    return ticket;
  }

  /** The chunk committed in SQLite. */
  applied(ticket: Ticket): void {
    const state = this.#state(ticket.topic, ticket.partition);
    if (ticket.epoch !== state.epoch) return;
    ticket.applied = true;
    while (state.tickets[0]?.applied) {
      const done = state.tickets.shift() as Ticket;
      this.#events -= done.events;
      // A chunk delivered again (after a rebalance) may end below the run: never move it back.
      const next = BigInt(done.last) + 1n;
      if (state.appliedUpTo === undefined || next > state.appliedUpTo) state.appliedUpTo = next;
    }
    this.#wake();
  }

  /**
   * The chunk's apply failed: every uncommitted chunk of its partition is dropped and the partition
   * blocked. Returns the offset to deliver again from, or undefined if an earlier failure of the
   * same partition already did (its tickets are stale).
   */
  failed(ticket: Ticket): string | undefined {
    const state = this.#state(ticket.topic, ticket.partition);
    if (ticket.epoch !== state.epoch) return undefined;
    const from = (state.tickets[0] as Ticket).first;
    for (const t of state.tickets) this.#events -= t.events;
    state.tickets.length = 0;
    state.epoch++;
    state.blockedFrom = BigInt(from);
    this.#wake();
    return from;
  }

  /** Offsets to commit now: partitions whose applied run moved past what was last committed. */
  commitable(): CommitOffset[] {
    const out: CommitOffset[] = [];
    for (const s of this.#partitions.values()) {
      if (s.appliedUpTo !== undefined && (s.committed === undefined || s.appliedUpTo > s.committed)) {
        out.push({ topic: s.topic, partition: s.partition, offset: s.appliedUpTo.toString() });
      }
    }
    return out;
  }

  /** Records a successful commit (never moves backwards). */
  committed(offsets: readonly CommitOffset[]): void {
    for (const o of offsets) {
      const state = this.#state(o.topic, o.partition);
      const at = BigInt(o.offset);
      if (state.committed === undefined || at > state.committed) state.committed = at;
    }
  }

  /** Resolves once fewer than `limit` events are in flight (limit 1: none at all). */
  below(limit: number): Promise<void> {
    if (this.#events < limit) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ limit, resolve }));
  }

  #wake(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) {
      if (this.#events < w.limit) w.resolve();
      else this.#waiters.push(w);
    }
  }

  #state(topic: string, partition: number): PartitionState {
    const key = `${topic}\u0000${partition}`;
    let state = this.#partitions.get(key);
    if (!state) {
      state = {
        topic,
        partition,
        epoch: 0,
        tickets: [],
        blockedFrom: undefined,
        appliedUpTo: undefined,
        committed: undefined,
      };
      this.#partitions.set(key, state);
    }
    return state;
  }
}
