import { existsSync, mkdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adoptDirectory,
  createGeneration,
  layoutOf,
  readGeneration,
  resolvedDataDir,
  swapTo,
} from '../src/generations.ts';
import { tempDataDir } from './support/apply.ts';

describe('projection generations', () => {
  it('detects missing, plain and symlinked data directories', () => {
    const root = tempDataDir('gen-');
    expect(layoutOf(join(root, 'current')).kind).toBe('missing');
    mkdirSync(join(root, 'plain'));
    expect(layoutOf(join(root, 'plain')).kind).toBe('directory');
    const layout = layoutOf(join(root, 'current'));
    const { dir } = createGeneration(layout, 'grp');
    swapTo(layout, dir);
    expect(layoutOf(join(root, 'current')).kind).toBe('symlink');
  });

  it('swaps the link to a new generation (relative target) and records its group', () => {
    const root = tempDataDir('gen-');
    const layout = layoutOf(join(root, 'current'));
    const first = createGeneration(layout, 'pda-ingest', new Date('2026-01-01T00:00:00Z'));
    swapTo(layout, first.dir);
    const second = createGeneration(layout, 'pda-ingest', new Date('2026-01-02T00:00:00Z'));
    expect(resolvedDataDir(layout.link)).toBe(realpathSync(first.dir));
    swapTo(layout, second.dir);
    expect(resolvedDataDir(layout.link)).toBe(realpathSync(second.dir));
    expect(readlinkSync(layout.link)).toBe('current.generations/g20260102000000000');
    expect(readGeneration(layout.link)).toEqual(second.info);
    expect(second.info.groupId).toBe('pda-ingest-g20260102000000000');
    expect(existsSync(first.dir)).toBe(true); // kept for rollback
  });

  it('adopts a plain directory as g0 keeping its files and the current group', () => {
    const root = tempDataDir('gen-');
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'control.sqlite'), 'x');
    const g0 = adoptDirectory(layoutOf(dataDir), 'live-group');
    expect(layoutOf(dataDir).kind).toBe('symlink');
    expect(existsSync(join(dataDir, 'control.sqlite'))).toBe(true);
    expect(readGeneration(g0)?.groupId).toBe('live-group');
  });
});
