/**
 * Projection generations: INGEST_DATA_DIR may be a symlink `<name> -> <name>.generations/<id>`.
 * `rebuild` builds a new generation beside the live one and swaps the link atomically (a new
 * symlink renamed over the old one). Readers detect a swap by the resolved realpath of the data
 * directory changing (ingest/README.md "Rebuild"); each generation records the consumer group that
 * built it in GENERATION.json, so the live worker continues from that group's offsets.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

export const GENERATION_FILE = 'GENERATION.json';

export interface GenerationInfo {
  readonly generation: string;
  readonly groupId: string;
  readonly builtAt: string;
}

export interface Layout {
  /** The configured INGEST_DATA_DIR (the symlink). */
  readonly link: string;
  readonly generationsDir: string;
  /** 'symlink' (rebuildable), 'directory' (a plain directory: adopt first), 'missing'. */
  readonly kind: 'symlink' | 'directory' | 'missing';
}

export function layoutOf(dataDir: string): Layout {
  const generationsDir = join(dirname(dataDir), `${basename(dataDir)}.generations`);
  if (!existsSync(dataDir) && !isSymlink(dataDir)) return { link: dataDir, generationsDir, kind: 'missing' };
  return { link: dataDir, generationsDir, kind: isSymlink(dataDir) ? 'symlink' : 'directory' };
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The directory the data dir resolves to now (what readers compare to notice a swap). */
export function resolvedDataDir(dataDir: string): string | undefined {
  try {
    return realpathSync(dataDir);
  } catch {
    return undefined;
  }
}

export function readGeneration(dir: string): GenerationInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(dir, GENERATION_FILE), 'utf8')) as GenerationInfo;
    return typeof info.groupId === 'string' && typeof info.generation === 'string' ? info : undefined;
  } catch {
    return undefined;
  }
}

export function createGeneration(
  layout: Layout,
  groupPrefix: string,
  now = new Date(),
): { dir: string; info: GenerationInfo } {
  const generation = `g${now
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 17)}`;
  const dir = join(layout.generationsDir, generation);
  mkdirSync(dir, { recursive: true });
  const info: GenerationInfo = {
    generation,
    groupId: `${groupPrefix}-${generation}`,
    builtAt: now.toISOString(),
  };
  writeFileSync(join(dir, GENERATION_FILE), `${JSON.stringify(info, null, 2)}\n`);
  return { dir, info };
}

/** Points the data-dir link at `target` atomically: rename(2) of a fresh symlink over the old one. */
export function swapTo(layout: Layout, target: string): void {
  const tmp = `${layout.link}.swap-${process.pid}`;
  symlinkSync(relative(dirname(layout.link), target), tmp);
  renameSync(tmp, layout.link);
}

/**
 * Turns a plain data directory into generation `g0` behind a symlink. Not atomic: between the two
 * renames the path does not exist for a moment (readers retry); done once, when adopting rebuilds.
 */
export function adoptDirectory(layout: Layout, groupId: string): string {
  const dir = join(layout.generationsDir, 'g0');
  mkdirSync(layout.generationsDir, { recursive: true });
  renameSync(layout.link, dir);
  if (!readGeneration(dir)) {
    const info: GenerationInfo = { generation: 'g0', groupId, builtAt: new Date().toISOString() };
    writeFileSync(join(dir, GENERATION_FILE), `${JSON.stringify(info, null, 2)}\n`);
  }
  swapTo(layout, dir);
  return dir;
}
