/**
 * Rows as aligned text columns under a header and a rule, for a terminal. The last column is not
 * padded, so a long meaning or value only makes its own line long.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width, i) =>
    '-'.repeat(i === widths.length - 1 ? (headers[i] ?? '').length : width),
  );
  return [line(headers), line(rule), ...rows.map(line)].join('\n');
}
