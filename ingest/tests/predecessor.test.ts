import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memberFilePath, readRecordedMember, recordMember } from '../src/kafka/predecessor.ts';

describe('the recorded group membership', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'predecessor-'));

  it('reads back what was recorded, and the newest record wins', () => {
    const file = memberFilePath(dir());
    recordMember(file, { groupId: 'g', memberId: 'm-1' });
    recordMember(file, { groupId: 'g', memberId: 'm-2' });
    expect(readRecordedMember(file)).toEqual({ groupId: 'g', memberId: 'm-2' });
  });

  it('is recorded in a data directory that does not exist yet (a fresh writer joins before its first batch)', () => {
    const file = memberFilePath(join(dir(), 'not-yet', 'data'));
    recordMember(file, { groupId: 'g', memberId: 'm-1' });
    expect(readRecordedMember(file)).toEqual({ groupId: 'g', memberId: 'm-1' });
  });

  it('leaves no temporary file beside it', () => {
    const d = dir();
    recordMember(memberFilePath(d), { groupId: 'g', memberId: 'm' });
    expect(readdirSync(d)).toEqual(['.ingest-group-member.json']);
  });

  it.each([
    ['missing', undefined],
    ['torn', '{"groupId":"g","memb'],
    ['foreign', '{"hello":"world"}'],
    ['empty member id', '{"groupId":"g","memberId":""}'],
  ])('is absent when the file is %s (the takeover is skipped, not an error)', (_, text) => {
    const file = memberFilePath(dir());
    if (text !== undefined) writeFileSync(file, text);
    expect(readRecordedMember(file)).toBeUndefined();
  });
});
