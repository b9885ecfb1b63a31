/**
 * Content-coding negotiation (RFC 9110, section 12.5.3) for plugins/compress.ts: the coding a
 * request's Accept-Encoding prefers among those offered, or undefined for the bytes as they are.
 *
 * - The highest q-value wins; `q=0` refuses a coding; `*` stands for every coding not named;
 *   `x-gzip` is gzip. Codings with the same q-value are taken in the server's order (`offered`).
 * - identity, when named with a higher q-value than every offered coding, keeps the bytes plain.
 *   Refusing identity (`identity;q=0`) when nothing else is acceptable still gets the plain bytes:
 *   an answer in a coding the client cannot read helps no one, and 406 would turn a readable
 *   answer into an error.
 * - No header, or an empty one, means identity.
 */

export function negotiateEncoding<C extends string>(
  header: string | undefined,
  offered: readonly C[],
): C | undefined {
  if (header === undefined || header === '') return undefined;
  const q = parse(header);
  const wildcard = q.get('*');
  let best: C | undefined;
  let bestQ = 0;
  for (const coding of offered) {
    const value = q.get(coding) ?? wildcard ?? 0;
    if (value > bestQ) {
      best = coding;
      bestQ = value;
    }
  }
  const identity = q.get('identity');
  return identity !== undefined && identity > bestQ ? undefined : best;
}

/** q-value per coding named in the header (lower case); a malformed q-value counts as 0. */
function parse(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const element of header.split(',')) {
    const [name = '', ...parameters] = element.split(';');
    let coding = name.trim().toLowerCase();
    if (coding === '') continue;
    if (coding === 'x-gzip') coding = 'gzip';
    let value = 1;
    for (const parameter of parameters) {
      const [key = '', raw = ''] = parameter.split('=');
      if (key.trim().toLowerCase() !== 'q') continue;
      const text = raw.trim();
      // RFC 9110 qvalue: 0 to 1 with at most three decimals.
      value = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(text) ? Number(text) : 0;
    }
    // A coding named twice keeps its higher q-value.
    q.set(coding, Math.max(value, q.get(coding) ?? 0));
  }
  return q;
}
