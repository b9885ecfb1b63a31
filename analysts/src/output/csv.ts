/**
 * One CSV record (RFC 4180): fields with a comma, quote or line break are quoted; NULL is empty.
 *
 * A text cell that a spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`, a tab
 * or a carriage return: OWASP's "CSV Injection" guidance) gets a leading `'`, which spreadsheets
 * show as text; the projections hold partners' free text (site names, notes), so an exported cell
 * such as `=HYPERLINK(…)` must not run when an analyst opens the file. Numbers are never changed
 * (`-5` is a number, not a formula). `neutralise: false` (`--raw-csv-cells`) writes every cell as
 * it is, for tools that read the CSV as data.
 */
export function csvRecord(
  values: readonly unknown[],
  options: { readonly neutralise?: boolean } = {},
): string {
  const neutralise = options.neutralise ?? true;
  return `${values.map((value) => csvField(value, neutralise)).join(',')}\r\n`;
}

const FORMULA_START = /^[=+\-@\t\r]/;

function csvField(value: unknown, neutralise: boolean): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? neutralise && FORMULA_START.test(value)
        ? `'${value}`
        : value
      : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
