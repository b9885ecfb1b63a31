import { RESOURCES } from '@pda/schemas/registry';
import { describe, expect, test } from 'vitest';
import { documentColumns, documentRenderer } from '../../src/read/document.ts';

describe('documentRenderer', () => {
  test('reads members from columns, nests objects, keeps the shape order', () => {
    const render = documentRenderer({
      id: 'id',
      rate: { amount: 'rate_amount', currency: 'rate_currency' },
      n: 'n',
    });
    const json = render({ id: 'a', rate_amount: '12.50', rate_currency: 'CAD', n: null, other: 1 });
    expect(json).toEqual({ id: 'a', rate: { amount: '12.50', currency: 'CAD' }, n: null });
    expect(Object.keys(json)).toEqual(['id', 'rate', 'n']);
  });

  test('member names are quoted, never code; a column that is not an identifier is refused', () => {
    const render = documentRenderer({ 'a"b': 'id', 'x-y': 'id' });
    expect(render({ id: 1 })).toEqual({ 'a"b': 1, 'x-y': 1 });
    expect(() => documentRenderer({ id: 'id; process.exit()' })).toThrow('not a column name');
  });

  test('one compiled renderer per shape', () => {
    const shape = RESOURCES.sites.document;
    expect(documentRenderer(shape)).toBe(documentRenderer(shape));
  });

  test('a site document: address and coordinates nested as the contract says', () => {
    expect(documentColumns(RESOURCES.sites.document)).toContain('address_line1');
    const row = Object.fromEntries(
      documentColumns(RESOURCES.sites.document).map((column) => [column, column]),
    );
    const json = documentRenderer(RESOURCES.sites.document)(row);
    expect(json.address).toEqual({
      line1: 'address_line1',
      line2: 'address_line2',
      city: 'city',
      region: 'region',
      postal_code: 'postal_code',
      country: 'country',
    });
    expect(json.coordinates).toEqual({
      latitude: 'latitude',
      longitude: 'longitude',
      accuracy: 'coordinates_accuracy',
      geocoded_at: 'geocoded_at',
    });
  });
});
