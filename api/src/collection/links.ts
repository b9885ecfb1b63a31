/**
 * Absolute page URLs from the configured public base URL (DESIGN.md §4: right behind a proxy),
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
