import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { companyPartition, parseOwnership } from '@pda/projections/model';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ownershipView } from '../src/forward/ownership-view.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const text = (aServes: number[], bServes: number[]) =>
  JSON.stringify({
    partitions: 2,
    writers: [
      { name: 'a', api: 'http://a.internal:1', serves: aServes },
      { name: 'b', api: 'http://b.internal:1', serves: bServes },
    ],
  });

/** Writes atomically, as an operator's deploy tool would (a new inode each time). */
function write(file: string, content: string) {
  writeFileSync(`${file}.next`, content);
  renameSync(`${file}.next`, file);
}

function company(partition: number): string {
  for (;;) {
    const id = crypto.randomUUID();
    if (companyPartition(id, 2) === partition) return id;
  }
}

describe('ownershipView', () => {
  it('follows a file that changed between the config read and the view (the race of a starting api)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ownership-view-'));
    dirs.push(dir);
    const file = join(dir, 'ownership.json');
    write(file, text([0, 1], []));
    const initial = parseOwnership(text([0, 1], []), file); // what config.ts read at start
    write(file, text([0], [1])); // the handover lands before the view exists
    let clock = 0;
    const view = ownershipView(file, initial, 'b', pino({ level: 'silent' }), () => clock, 1_000);
    expect(view.owner(company(1)).name).toBe('b');
    // And later changes are still followed, once per check interval.
    write(file, text([0, 1], []));
    expect(view.owner(company(1)).name).toBe('b');
    clock += 1_000;
    expect(view.owner(company(1)).name).toBe('a');
  });

  it('keeps the last usable version when the file stops being usable, and retries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ownership-view-'));
    dirs.push(dir);
    const file = join(dir, 'ownership.json');
    write(file, text([0], [1]));
    let clock = 0;
    const view = ownershipView(
      file,
      parseOwnership(text([0], [1])),
      'a',
      pino({ level: 'silent' }),
      () => clock,
      10,
    );
    write(file, '{ not json');
    clock += 10;
    expect(view.owner(company(1)).name).toBe('b');
    write(file, text([0, 1], []));
    clock += 10;
    expect(view.owner(company(1)).name).toBe('a');
  });
});
