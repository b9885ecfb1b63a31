import { describe, expect, it } from 'vitest';
import { InFlightChunks, type Ticket } from '../src/kafka/in-flight.ts';

const must = (t: Ticket | undefined): Ticket => {
  if (!t) throw new Error('expected a ticket');
  return t;
};

describe('in-flight chunks and committable offsets', () => {
  it('commits a partition only up to the end of its applied run, in submission order', () => {
    const f = new InFlightChunks();
    const a = must(f.add('t', 0, '0', '9', 10));
    const b = must(f.add('t', 0, '10', '19', 10));
    const c = must(f.add('t', 1, '100', '104', 5));
    expect(f.events()).toBe(25);
    f.applied(b); // out of order: nothing committable for partition 0 yet
    f.applied(c);
    expect(f.commitable()).toEqual([{ topic: 't', partition: 1, offset: '105' }]);
    f.applied(a);
    expect(f.commitable()).toEqual([
      { topic: 't', partition: 0, offset: '20' },
      { topic: 't', partition: 1, offset: '105' },
    ]);
    expect(f.events()).toBe(0);
    f.committed(f.commitable());
    expect(f.commitable()).toEqual([]);
  });

  it('never commits past a failed chunk: later chunks are dropped and the partition is blocked', () => {
    const f = new InFlightChunks();
    const a = must(f.add('t', 0, '0', '9', 10));
    const b = must(f.add('t', 0, '10', '19', 10));
    const c = must(f.add('t', 0, '20', '29', 10));
    f.applied(a);
    expect(f.failed(b)).toBe('10');
    expect(f.failed(c)).toBeUndefined(); // stale: the partition already failed
    f.applied(c); // a later chunk that did apply must not move the offset over b
    expect(f.commitable()).toEqual([{ topic: 't', partition: 0, offset: '10' }]);
    expect(f.events()).toBe(0);
    // Until the records come again from offset 10, nothing else is accepted.
    expect(f.add('t', 0, '30', '39', 10)).toBeUndefined();
    const again = must(f.add('t', 0, '10', '19', 10));
    f.applied(again);
    expect(f.commitable()).toEqual([{ topic: 't', partition: 0, offset: '20' }]);
  });

  it('never moves a committed offset backwards (a replay after a rebalance)', () => {
    const f = new InFlightChunks();
    f.applied(must(f.add('t', 0, '0', '49', 50)));
    f.committed(f.commitable());
    f.applied(must(f.add('t', 0, '10', '19', 10)));
    expect(f.commitable()).toEqual([]);
  });

  it('a chunk delivered again behind the applied run does not move it back', () => {
    const f = new InFlightChunks();
    const b = must(f.add('t', 0, '10', '19', 10));
    const again = must(f.add('t', 0, '0', '9', 10)); // redelivered after a rebalance
    f.applied(b);
    f.applied(again);
    expect(f.commitable()).toEqual([{ topic: 't', partition: 0, offset: '20' }]);
  });

  it('offsets beyond 2^53 stay exact', () => {
    const f = new InFlightChunks();
    f.applied(must(f.add('t', 0, '9007199254740993', '9007199254740999', 7)));
    expect(f.commitable()).toEqual([{ topic: 't', partition: 0, offset: '9007199254741000' }]);
  });

  it('below() waits for the events in flight to drop under the limit', async () => {
    const f = new InFlightChunks();
    const a = must(f.add('t', 0, '0', '9', 10));
    const b = must(f.add('t', 0, '10', '19', 10));
    let released = false;
    const waiting = f.below(15).then(() => {
      released = true;
    });
    await Promise.resolve();
    expect(released).toBe(false);
    f.applied(a);
    await waiting;
    expect(released).toBe(true);
    const none = f.below(1);
    f.failed(b);
    await none;
    expect(f.events()).toBe(0);
  });
});
