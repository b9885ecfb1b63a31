// Where a test file lives (README.md, "Tests"; docs/architecture.md, code conventions): a package's
// tests in its own tests/ folder; the top-level test/ only for what crosses packages — end-to-end
// runs, the fault campaign, container tests, unit tests of scripts/ and checks that hold several
// packages to each other. The suffix says what a test needs, wherever it is.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = join(import.meta.dirname, '..', '..');

const kind = (file: string) =>
  file.endsWith('.e2e.test.ts') ? 'e2e' : file.endsWith('.containers.test.ts') ? 'containers' : 'unit';

/** The top-level test/ folders and the kind of test each holds (a file at test/'s top: e2e only). */
const TOP_LEVEL: Record<string, ReturnType<typeof kind>> = {
  '': 'e2e',
  faults: 'e2e',
  containers: 'containers',
  'repo-scripts': 'unit',
  'cross-package': 'unit',
};

/** Why `file` breaks the placement rule, or null; `packages` are the workspace's package folders. */
function misplaced(file: string, packages: ReadonlySet<string>): string | null {
  const [top = '', ...rest] = file.split('/');
  if (top === 'test') {
    const folder = rest.length > 1 ? (rest[0] ?? '') : '';
    const expected = TOP_LEVEL[folder];
    if (expected === undefined) return `test/${folder}/ is not a folder of the top-level test/`;
    if (rest.length > 2) return `test/${folder}/ holds files, not folders`;
    if (kind(file) !== expected)
      return `test/${folder ? `${folder}/` : ''} holds ${expected} tests, this is ${kind(file)}`;
    return null;
  }
  if (!packages.has(top)) return `${top}/ is not a package: cross-package tests go in test/`;
  if (rest[0] !== 'tests') return `a package's tests live in ${top}/tests/`;
  return null;
}

const packages = new Set(
  execFileSync('git', ['ls-files', '*/package.json'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\n')
    .filter((path) => /^[^/]+\/package\.json$/.test(path))
    .map((path) => path.split('/')[0] ?? ''),
);

describe('test placement', () => {
  it('every tracked test file is where the rule puts it', () => {
    const files = execFileSync('git', ['ls-files', '*.test.ts'], { cwd: repoRoot, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file !== '' && existsSync(join(repoRoot, file)));
    expect(files.length).toBeGreaterThan(100);
    const wrong = files.flatMap((file) => {
      const why = misplaced(file, packages);
      return why === null ? [] : [`${file}: ${why}`];
    });
    expect(wrong).toEqual([]);
  });

  it.each([
    ['api/tests/list.test.ts', null],
    ['api/tests/sub/list.e2e.test.ts', null],
    ['test/faults/disk-full.e2e.test.ts', null],
    ['test/containers/compose.containers.test.ts', null],
    ['test/repo-scripts/summarize-results.test.ts', null],
    ['test/partner-sync.e2e.test.ts', null],
    ['projections/src/read/read.test.ts', "a package's tests live in projections/tests/"],
    ['operator-tools/keys/tests/keys-unit.test.ts', "a package's tests live in operator-tools/tests/"],
    ['test/summarize-results.test.ts', 'test/ holds e2e tests, this is unit'],
    ['test/faults/pure.test.ts', 'test/faults/ holds e2e tests, this is unit'],
    ['test/misc/x.test.ts', 'test/misc/ is not a folder of the top-level test/'],
    ['scripts/x.test.ts', 'scripts/ is not a package: cross-package tests go in test/'],
  ])('%s: %s', (file, why) => {
    expect(misplaced(file, packages)).toBe(why);
  });
});
