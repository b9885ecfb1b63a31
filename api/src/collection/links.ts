/**
 * Absolute page URLs from the configured public base URL (right behind a proxy; api/README.md),
 * carrying every parameter the next request needs; clients follow them without rebuilding.
 */

export type QueryPairs = readonly (readonly [string, string | undefined])[];

export function pageUrl(baseUrl: string, path: string, pairs: QueryPairs): string {
  const query = pairs
    .filter((pair): pair is readonly [string, string] => pair[1] !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  return query.length > 0 ? `${baseUrl}${path}?${query}` : `${baseUrl}${path}`;
}
