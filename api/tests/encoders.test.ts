import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { type Coding, type CompressionSettings, encoders } from '../src/compression/encoders.ts';
import { COMPRESSION } from '../src/plugins/compress.ts';

// The one-shot encoders of plugins/compress.ts: every coding decodes to exactly the bytes given,
// one after another through the same engine, at every size (the reused zlib engine's output buffer
// grows, and bodies above its bound take zlib's *Sync functions).

const DECODE: Record<Coding, (body: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
};

function jsonBody(rows: number): Buffer {
  const data = Array.from({ length: rows }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: `Site ${i} — Zürich “Nord”`,
    notes: randomBytes(24).toString('base64'),
  }));
  return Buffer.from(JSON.stringify({ data, meta: { page: { limit: rows } } }));
}

// Sizes around the engine's first output buffer (64 KiB) and its bound (1 MiB), and a body that
// does not compress (random bytes: deflate's stored blocks are its worst case).
const BODIES = [
  jsonBody(1),
  jsonBody(50),
  jsonBody(600),
  jsonBody(50),
  randomBytes(200_000),
  jsonBody(9_000),
  Buffer.alloc(0),
  jsonBody(2),
];

// Strings whose UTF-8 is up to 3 bytes per UTF-16 unit (the input buffer's bound), and 4 bytes per
// surrogate pair.
const STRINGS = [
  jsonBody(50).toString('utf8'),
  '€'.repeat(30_000),
  '😀'.repeat(20_000),
  jsonBody(600).toString('utf8'),
  'plain ascii',
  '',
];

describe.each([
  ['reused engines', COMPRESSION],
  ["zlib's *Sync per body", { ...COMPRESSION, reuseEngines: false }],
  ['other levels', { ...COMPRESSION, zlibLevel: 6, brotliQuality: 4, zstdLevel: 3 }],
] satisfies [string, CompressionSettings][])('encoders, %s', (_name, settings) => {
  const encode = encoders(settings);
  test.each(['gzip', 'deflate', 'br', 'zstd'] satisfies Coding[])(
    '%s decodes to the bytes given',
    (coding) => {
      for (const body of BODIES) {
        expect(DECODE[coding](encode[coding](body)).equals(body)).toBe(true);
      }
    },
  );

  test.each(['gzip', 'deflate', 'br', 'zstd'] satisfies Coding[])('%s takes a string as UTF-8', (coding) => {
    for (const text of [STRINGS, STRINGS.slice().reverse()].flat()) {
      expect(DECODE[coding](encode[coding](text)).toString('utf8')).toBe(text);
    }
  });

  test('an encoded body is not overwritten by the next one', () => {
    const first = jsonBody(50);
    const encoded = encode.gzip(first);
    const copy = Buffer.from(encoded);
    encode.gzip(jsonBody(70));
    expect(encoded.equals(copy)).toBe(true);
  });
});

test.each([0, 1, 4])('the reused engines give the bytes zlib gives (brotli quality %i)', (brotliQuality) => {
  const reused = encoders({ ...COMPRESSION, brotliQuality });
  const perCall = encoders({ ...COMPRESSION, brotliQuality, reuseEngines: false });
  // Three bodies through the same engines: each restart keeps the level and the quality.
  for (const body of [jsonBody(50), jsonBody(70), jsonBody(50)]) {
    for (const coding of ['gzip', 'deflate', 'br'] satisfies Coding[]) {
      expect(reused[coding](body).equals(perCall[coding](body))).toBe(true);
    }
  }
});
