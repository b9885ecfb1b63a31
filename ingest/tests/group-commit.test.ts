import { describe, expect, it } from 'vitest';
import { createGroupCommitter } from '../src/batch/group-commit.ts';

/** A commit that settles only when the test says so, recording what it was given. */
function controlledCommit() {
  const calls: { group: number[]; settle(error?: Error): void }[] = [];
  return {
    calls,
    commit: (group: number[]) =>
      new Promise<string>((resolve, reject) => {
        calls.push({
          group,
          settle: (error) => (error ? reject(error) : resolve(`done ${group.join(',')}`)),
        });
      }),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

function committer(
  maxGroupSize: number | (() => number),
  maxInFlight: number,
  commit: (g: number[]) => Promise<string>,
) {
  return createGroupCommitter<number[], string>({
    merge: (items) => items.flat(),
    size: (item) => item.length,
    commit,
    maxGroupSize,
    maxInFlight,
  });
}

describe('group commit', () => {
  it('merges what queued behind the groups in flight, in submission order', async () => {
    const c = controlledCommit();
    const g = committer(100, 1, c.commit);
    const first = g.submit([1]);
    const rest = [g.submit([2]), g.submit([3, 4]), g.submit([5])];
    expect(c.calls.map((x) => x.group)).toEqual([[1]]);
    c.calls[0]?.settle();
    expect(await first).toBe('done 1');
    await tick();
    expect(c.calls.map((x) => x.group)).toEqual([[1], [2, 3, 4, 5]]);
    c.calls[1]?.settle();
    // Every submitter of the group gets the group's outcome, only after it committed.
    expect(await Promise.all(rest)).toEqual(['done 2,3,4,5', 'done 2,3,4,5', 'done 2,3,4,5']);
    expect(g.pending()).toBe(0);
  });

  it('keeps up to maxInFlight groups in flight and caps a group at maxGroupSize', async () => {
    const c = controlledCommit();
    const g = committer(3, 2, c.commit);
    const all = [
      g.submit([1]),
      g.submit([2]),
      g.submit([3]),
      g.submit([4, 5]),
      g.submit([6]),
      g.submit([7, 8, 9, 10]),
    ];
    expect(c.calls.map((x) => x.group)).toEqual([[1], [2]]);
    c.calls[0]?.settle();
    await tick();
    // [3] + [4,5] fill 3; [6] would exceed it. An item bigger than the cap still goes alone.
    expect(c.calls.map((x) => x.group)).toEqual([[1], [2], [3, 4, 5]]);
    c.calls[1]?.settle();
    await tick();
    c.calls[2]?.settle();
    await tick();
    expect(c.calls.map((x) => x.group).slice(3)).toEqual([[6], [7, 8, 9, 10]]);
    for (const call of c.calls.slice(3)) call.settle();
    await Promise.all(all);
  });

  it('a maxGroupSize function is read each time a group is formed', async () => {
    const c = controlledCommit();
    let max = 2;
    const g = committer(() => max, 1, c.commit);
    const all = [g.submit([1]), g.submit([2]), g.submit([3]), g.submit([4]), g.submit([5]), g.submit([6])];
    c.calls[0]?.settle();
    await tick();
    expect(c.calls.map((x) => x.group)).toEqual([[1], [2, 3]]);
    max = 10;
    c.calls[1]?.settle();
    await tick();
    expect(c.calls.map((x) => x.group)).toEqual([[1], [2, 3], [4, 5, 6]]);
    c.calls[2]?.settle();
    await Promise.all(all);
  });

  it('a failed group rejects all of its submitters and only them', async () => {
    const c = controlledCommit();
    const g = committer(100, 1, c.commit);
    const a = g.submit([1]);
    const b = g.submit([2]);
    const d = g.submit([3]);
    c.calls[0]?.settle();
    await a;
    await tick();
    c.calls[1]?.settle(new Error('disk full'));
    await expect(b).rejects.toThrow('disk full');
    await expect(d).rejects.toThrow('disk full');
    const e = g.submit([4]);
    await tick();
    c.calls[2]?.settle();
    expect(await e).toBe('done 4');
  });

  it('a commit that throws synchronously rejects its group instead of throwing at submit', async () => {
    const g = committer(10, 1, () => {
      throw new Error('boom');
    });
    await expect(g.submit([1])).rejects.toThrow('boom');
    expect(g.pending()).toBe(0);
  });
});
