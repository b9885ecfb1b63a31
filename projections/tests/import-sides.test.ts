import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The single-writer rule as an import rule. Ingest is the one writer of a data directory; the api,
// the analysts' tools, the operator tools, the dev world and the client only read, so their code imports
// `@pda/projections/read` (and `/model`), never `@pda/projections/write`. Their tests and test
// helpers (`tests/`, `testing/`) may write: they play ingest to build a projection to read.
// Inside the package the sides layer the same way: model imports neither side, read never
// imports write.

const repo = join(import.meta.dirname, '../..');
const READER_PACKAGES = ['api', 'analysts', 'operator-tools', 'dev-world', 'client'];
const IMPORT = /(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;

function sourceFiles(dir: string, skipTests: boolean): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      if (skipTests && (entry.name === 'tests' || entry.name === 'testing')) continue;
      found.push(...sourceFiles(path, skipTests));
    } else if (entry.name.endsWith('.ts') && !(skipTests && entry.name.endsWith('.test.ts'))) {
      found.push(path);
    }
  }
  return found;
}

/** `file`'s imports that `refused` matches, as "path: specifier". */
function refusedImports(files: readonly string[], refused: (specifier: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of files) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (specifier !== undefined && refused(specifier)) found.push(`${relative(repo, file)}: ${specifier}`);
    }
  }
  return found;
}

const writeSide = (specifier: string) =>
  specifier === '@pda/projections/write' || /projections\/src\/write\//.test(specifier);

describe('import sides', () => {
  it('the reading packages import no write side of the projections', () => {
    const files = READER_PACKAGES.flatMap((name) => sourceFiles(join(repo, name), true));
    expect(files.length).toBeGreaterThan(50);
    expect(refusedImports(files, writeSide)).toEqual([]);
  });

  it('the package exports no catch-all entry point that would carry the writer', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'projections/package.json'), 'utf8'));
    expect(Object.keys(pkg.exports).sort()).toEqual(['./cli', './model', './read', './testing', './write']);
    expect(pkg.main).toBeUndefined();
  });

  it('read imports no write module, model neither side', () => {
    const src = join(repo, 'projections/src');
    const read = sourceFiles(join(src, 'read'), false);
    const model = sourceFiles(join(src, 'model'), false);
    expect(refusedImports(read, (s) => /(^|\/)write\//.test(s))).toEqual([]);
    expect(refusedImports(model, (s) => /(^|\/)(read|write)\//.test(s))).toEqual([]);
  });
});
