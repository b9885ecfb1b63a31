/**
 * The one SQL identifier quoting of the projections, for the writers and the readers: names come
 * only from our own schema and table specs, quoting keeps even those inert.
 */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
