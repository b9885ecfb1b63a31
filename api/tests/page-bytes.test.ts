import { describe, expect, test } from 'vitest';
import { pageBytes } from '../src/http/page-bytes.ts';

// A page's bytes are written from its parts (http/page-bytes.ts): they must be exactly the UTF-8
// of the joined string they replace, whatever the characters.
const joined = (head: string, items: readonly string[], tail: string) =>
  Buffer.from(`${head}${items.join(',')}${tail}`, 'utf8');

describe('pageBytes', () => {
  test.each([
    ['no record', [] as string[]],
    ['one record', ['{"id":"a"}']],
    ['ASCII records', ['{"id":"a"}', '{"id":"b","name":"x"}', '{"id":"c"}']],
    ['two- to four-byte characters', ['{"name":"Café Müller"}', '{"name":"東京"}', '{"name":"🚚 depot"}']],
    ['a lone surrogate (written as U+FFFD, as a string would be)', ['{"name":"\ud800"}', '{"name":"ok"}']],
  ])('%s: the same bytes as the joined string', (_, items) => {
    const head = '{"data":[';
    const tail =
      '],"meta":{"page":{"limit":50,"has_more":false}},"links":{"next":null,"self":"https://x.test/v1/sites?limit=50&ç=1"}}';
    const bytes = pageBytes(head, items, tail);
    expect(bytes.equals(joined(head, items, tail))).toBe(true);
    expect(JSON.parse(bytes.toString('utf8')).data).toHaveLength(items.length);
  });

  test('a page of 200 stored documents of ~1 KB each', () => {
    const items = Array.from({ length: 200 }, (_, n) =>
      JSON.stringify({ id: `site-${n}`, notes: 'é'.repeat(500) }),
    );
    expect(pageBytes('[', items, ']').equals(joined('[', items, ']'))).toBe(true);
  });
});
