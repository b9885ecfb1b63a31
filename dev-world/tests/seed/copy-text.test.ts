import { describe, expect, it } from 'vitest';
import { copyField, copyLine } from '../../seed/copy-text.ts';
import { batchRows } from '../../seed/copy-writer.ts';
import { generateCompanyData } from '../../seed/index.ts';

describe('COPY text format', () => {
  it.each([
    [null, '\\N'],
    [12, '12'],
    ['plain', 'plain'],
    ['tab\there', 'tab\\there'],
    ['two\nlines\r', 'two\\nlines\\r'],
    ['back\\slash', 'back\\\\slash'],
    ['\\N', '\\\\N'], // the text "\N" is not NULL
  ])('%j → %j', (value, expected) => {
    expect(copyField(value)).toBe(expected);
  });

  it('writes one tab-separated line per row in the given column order', () => {
    expect(copyLine({ a: 'x', b: null, c: 3 }, ['c', 'a', 'b'])).toBe('3\tx\t\\N\n');
  });

  it('batches consecutive rows of one table, never mixing tables', () => {
    const counts = {
      companies: 2,
      sites: 7,
      contactsPerSite: 1,
      services: 2,
      categories: 1,
      equipment: 1,
      consumables: 1,
    };
    const batches = [...batchRows(generateCompanyData(1, counts), 3)];
    expect(batches.every((b) => b.rows <= 3 && b.text.split('\n').length === b.rows + 1)).toBe(true);
    expect(batches.reduce((n, b) => n + b.rows, 0)).toBe(2 * (1 + 7 + 7 + 2 + 1 + 1 + 1));
    expect(batches.slice(0, 6).map((b) => `${b.table}:${b.rows}`)).toEqual([
      'companies:1',
      'equipment_categories:1',
      'equipment:1',
      'consumables:1',
      'services:2',
      'sites:3',
    ]);
  });
});
