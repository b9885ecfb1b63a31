// PostgreSQL COPY text format: tab-separated, \N for NULL, backslash escapes for the characters
// that would otherwise end a field or a line (https://www.postgresql.org/docs/current/sql-copy.html).

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const SPECIAL = /[\\\n\r\t]/;
const SPECIAL_ALL = /[\\\n\r\t]/g;

export function copyField(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  // Most generated text needs no escaping; testing first is much cheaper than replace().
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (ch) => ESCAPES[ch] ?? ch) : value;
}

/** One COPY line (with its newline) of a row, in the given column order. */
export function copyLine<R extends object>(row: R, columns: readonly (keyof R)[]): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i] as keyof R;
    if (i > 0) line += '\t';
    line += copyField(row[column] as string | number | null);
  }
  return `${line}\n`;
}
