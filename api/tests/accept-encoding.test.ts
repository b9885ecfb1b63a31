import { describe, expect, test } from 'vitest';
import { negotiateEncoding } from '../src/compression/accept-encoding.ts';

// Accept-Encoding negotiation (RFC 9110, section 12.5.3; api/README.md, "Compression"), against
// the order the api offers its codings in.

const OFFERED = ['gzip', 'br', 'zstd', 'deflate'] as const;

describe('negotiateEncoding', () => {
  test.each([
    // What fetch/undici, Python requests, curl --compressed and browsers send: the server's order.
    ['gzip, deflate, br', 'gzip'],
    ['gzip, deflate, br, zstd', 'gzip'],
    ['br, gzip', 'gzip'],
    ['br', 'br'],
    ['zstd', 'zstd'],
    ['deflate', 'deflate'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    [' br ; q=1 ', 'br'],
    // The highest q-value wins over the server's order.
    ['gzip;q=0.5, br', 'br'],
    ['gzip;q=0.5, br;q=0.8', 'br'],
    ['br;q=0.001, deflate;q=0.002', 'deflate'],
    ['gzip;q=1.0, br;q=1', 'gzip'],
    // q=0 refuses a coding.
    ['gzip;q=0, br', 'br'],
    ['gzip;q=0.000, deflate', 'deflate'],
    // * stands for every coding not named.
    ['*', 'gzip'],
    ['gzip;q=0, *', 'br'],
    ['br;q=0.5, *;q=0.1', 'br'],
    ['*;q=0, zstd', 'zstd'],
    // A coding named twice keeps its higher q-value.
    ['gzip;q=0, gzip;q=0.4', 'gzip'],
  ])('%j → %s', (header, expected) => {
    expect(negotiateEncoding(header, OFFERED)).toBe(expected);
  });

  test.each([
    [undefined],
    [''],
    ['identity'],
    ['gzip;q=0'],
    ['*;q=0'],
    ['compress, exi'],
    // identity preferred over every coding offered.
    ['identity;q=1, gzip;q=0.5'],
    ['identity, *;q=0.9'],
    // identity refused and nothing else acceptable: still the plain bytes (no 406).
    ['identity;q=0'],
    ['identity;q=0, compress'],
    // A q-value outside the grammar counts as 0.
    ['gzip;q=2'],
    ['gzip;q=-1'],
    ['gzip;q=abc'],
    ['gzip;q=0.0001'],
  ])('%j → identity', (header) => {
    expect(negotiateEncoding(header, OFFERED)).toBeUndefined();
  });

  test('only offered codings are chosen', () => {
    expect(negotiateEncoding('zstd, br', ['gzip'])).toBeUndefined();
    expect(negotiateEncoding('*', ['deflate'])).toBe('deflate');
  });
});
