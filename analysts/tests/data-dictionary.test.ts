import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RESOURCE_NAMES, RESOURCES, TABLE_NAMES, TABLES } from '@pda/schemas/registry';
import { describe, expect, it } from 'vitest';
import { buildDictionary, DictionaryError } from '../src/dictionary/build-dictionary.ts';
import { datasetteMetadata } from '../src/dictionary/datasette-metadata.ts';
import { readMigrationComments } from '../src/dictionary/migration-comments.ts';
import { DICTIONARY_COMMAND, DICTIONARY_DOC, renderMarkdown } from '../src/dictionary/render-markdown.ts';
import { analysisSchema } from '../src/snapshot/analysis-schema.ts';

const repoFile = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));

describe('the data dictionary', () => {
  const dictionary = buildDictionary();

  it(`${DICTIONARY_DOC} is current (regenerate with \`${DICTIONARY_COMMAND}\`)`, () => {
    const onDisk = readFileSync(repoFile(DICTIONARY_DOC), 'utf8');
    expect(
      onDisk === renderMarkdown(dictionary),
      `${DICTIONARY_DOC} is stale: run \`${DICTIONARY_COMMAND}\``,
    ).toBe(true);
  });

  it('describes every table and column of both kinds of file, with the types SQLite declares', () => {
    const company = dictionary.tables.filter((table) => table.file === 'company').map((table) => table.name);
    expect(company).toEqual(
      expect.arrayContaining(['meta', 'sites', 'services', 'tombstones', 'truncations']),
    );
    for (const table of dictionary.tables) {
      expect(table.description, table.name).not.toBe('');
      for (const column of table.columns)
        expect(column.description, `${table.name}.${column.name}`).not.toBe('');
    }
    const sites = dictionary.tables.find((table) => table.name === 'sites');
    const area = sites?.columns.find((column) => column.name === 'area');
    expect(area).toMatchObject({ type: 'REAL', unit: 'm²', since: 1 });
    expect(sites?.columns.find((column) => column.name === '_json')).toMatchObject({
      type: 'TEXT',
      since: 3,
    });
    expect(sites?.columns.find((column) => column.name === 'id')).toMatchObject({
      type: 'TEXT NOT NULL',
      primaryKey: true,
    });
  });

  it('a table made again by a later migration keeps the version it and its columns came in', () => {
    // control migration 005 makes dead_letters again, without message_value and with op.
    const letters = dictionary.tables.find((t) => t.name === 'dead_letters' && t.file === 'control');
    expect(letters?.since).toBe(2);
    expect(letters?.columns.find((c) => c.name === 'reason')?.since).toBe(2);
    expect(letters?.columns.find((c) => c.name === 'op')?.since).toBe(5);
    expect(letters?.columns.map((c) => c.name)).not.toContain('message_value');
  });

  it('takes each captured table and its api fields from the registry', () => {
    for (const name of TABLE_NAMES) {
      const file = TABLES[name].kind === 'tenant' ? 'company' : 'control';
      const table = dictionary.tables.find((t) => t.name === name && t.file === file);
      expect(table?.source, name).toBe(`public.${name}`);
      // Every registry column is projected (the company_id of tenant tables is the file itself).
      const columns = table?.columns.map((column) => column.name) ?? [];
      expect(columns).toEqual(expect.arrayContaining(Object.keys(TABLES[name].columns)));
    }
    for (const name of RESOURCE_NAMES) {
      const table = dictionary.tables.find((t) => t.name === RESOURCES[name].table && t.file === 'company');
      expect(table?.resources).toContain(RESOURCES[name].path);
    }
    const city = dictionary.tables.find((t) => t.name === 'sites')?.columns.find((c) => c.name === 'city');
    expect(city?.apiFields).toEqual([{ path: '/v1/sites', member: 'address.city', include: null }]);
    const group = dictionary.tables
      .find((t) => t.name === 'equipment_categories')
      ?.columns.find((c) => c.name === 'group_name');
    expect(group?.apiFields).toEqual([
      { path: '/v1/equipment', member: 'category.group', include: 'category' },
      { path: '/v1/equipment-categories', member: 'group', include: null },
    ]);
  });

  it('refuses a migration whose column has no comment', () => {
    const comments = readMigrationComments([
      {
        version: 1,
        name: '001-x.sql',
        sql: '-- A table.\nCREATE TABLE t (\n  a TEXT, -- the a [m²]\n  b TEXT\n);',
      },
    ]);
    expect(comments.columns.get('t.a')).toEqual({ description: 'the a', unit: 'm²', since: 1 });
    expect(comments.columns.has('t.b')).toBe(false);
    expect(comments.declared.get('t.b')).toBe(1);
    expect(new DictionaryError('x')).toBeInstanceOf(Error);
  });

  it('reads header definitions, continuation lines and comment blocks above ALTERs', () => {
    const comments = readMigrationComments([
      {
        version: 1,
        name: '001-x.sql',
        sql: [
          '-- File header.',
          '-- Shared:',
          '--   _x        what x is, on',
          '--             two lines [µs]',
          '',
          '-- The table t.',
          'CREATE TABLE t (',
          '  a TEXT NOT NULL, -- first line',
          '                   -- second line',
          '  _x INTEGER,',
          '  PRIMARY KEY (a)',
          ') STRICT;',
        ].join('\n'),
      },
      {
        version: 2,
        name: '002-y.sql',
        sql: [
          '-- Version 2.',
          '',
          '-- c: one block for two',
          '-- columns.',
          'ALTER TABLE t ADD COLUMN c TEXT;',
          'ALTER TABLE u ADD COLUMN c TEXT;',
        ].join('\n'),
      },
    ]);
    expect(comments.tables.get('t')?.description).toBe('The table t.');
    expect(comments.columns.get('t.a')?.description).toBe('first line second line');
    expect(comments.shared.get('_x')).toEqual({
      description: 'what x is, on two lines',
      unit: 'µs',
      since: 1,
    });
    expect(comments.columns.get('t.c')).toEqual({
      description: 'one block for two columns.',
      unit: null,
      since: 2,
    });
    expect(comments.columns.get('u.c')?.description).toBe('one block for two columns.');
    expect(comments.declared.get('t._x')).toBe(1);
  });
});

describe('the Datasette metadata', () => {
  const dictionary = buildDictionary();

  it('describes every analysis table and column and only facets columns that exist', () => {
    const metadata = datasetteMetadata(dictionary, 'analysis', 'analysis');
    const tables = metadata.databases.analysis?.tables ?? {};
    for (const table of analysisSchema(dictionary)) {
      const entry = tables[table.name];
      expect(entry?.description, table.name).toBeTruthy();
      for (const column of table.columns)
        expect(entry?.columns[column.name], `${table.name}.${column.name}`).toBeTruthy();
      for (const facet of entry?.facets ?? []) {
        expect(
          table.columns.map((c) => c.name),
          `facet ${table.name}.${facet}`,
        ).toContain(facet);
      }
    }
    expect(tables.sites?.facets).toEqual(['company_id', 'city', 'country']);
    expect(tables.equipment_categories?.facets).toEqual(['company_id', 'group_name']);
    expect(tables.sites?.units).toEqual({ area: 'm^2' });
    expect(tables.sites?.label_column).toBe('name');
  });

  it('leaves company_id out of a single company snapshot', () => {
    const tables = datasetteMetadata(dictionary, 'one', 'company').databases.one?.tables ?? {};
    expect(tables.sites?.facets).toEqual(['city', 'country']);
    expect(tables.sites?.columns._json).toBeTruthy();
  });
});
