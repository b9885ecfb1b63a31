/**
 * Reads a deployable's settings table from its README (`| \`NAME\` | default | meaning |`, a row
 * may name several settings: `| \`A\` / \`B\` | \`1\` / \`2\` | ... |`) and states each default the
 * way a schema yields it, so ingest/tests/readme-settings.test.ts and api/tests/readme-settings.test.ts
 * compare the table with the config schema of their package (one table per README, checked, not
 * copied by hand).
 */

/** A default as both sides can state it: required, none (unset), or a value. */
export type SettingDefault =
  | { readonly kind: 'required' }
  | { readonly kind: 'unset' }
  | { readonly kind: 'value'; readonly value: unknown };

export interface DocumentedSetting {
  readonly name: string;
  /** The default cell's text for this setting (its share of a row that names several). */
  readonly text: string;
}

const SETTING_ROW = /^\|\s*(`[A-Z][A-Z0-9_]*`(?:\s*\/\s*`[A-Z][A-Z0-9_]*`)*)\s*\|([^|]*)\|/;

/**
 * The rows of every table in `markdown` whose first cell names settings with `prefix`, in order. A
 * first cell naming such a setting in another form (`| \`A\` … |`) throws: a row the check cannot
 * read must not pass unchecked.
 */
export function settingRows(
  markdown: string,
  prefix: string,
): { line: number; names: string[]; cell: string }[] {
  const rows: { line: number; names: string[]; cell: string }[] = [];
  markdown.split('\n').forEach((text, index) => {
    const firstCell = /^\|([^|]*)\|/.exec(text)?.[1] ?? '';
    if (!firstCell.includes(`\`${prefix}`)) return;
    const match = SETTING_ROW.exec(text);
    if (!match?.[1] || match[2] === undefined)
      throw new Error(
        `line ${index + 1}: a setting row must name settings only (\`A\` or \`A\` / \`B\`): ${text}`,
      );
    const names = [...match[1].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1] as string);
    rows.push({ line: index + 1, names, cell: match[2].trim() });
  });
  return rows;
}

/**
 * The settings of the first table after `heading` (a line starting with it), one entry per name.
 * A row naming several settings gives each its part of the default cell (split at ` / `), or the
 * whole cell when it has one part (`unset` for a pair).
 */
export function documentedSettings(markdown: string, heading: string, prefix: string): DocumentedSetting[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(heading));
  if (start === -1) throw new Error(`no heading ${heading}`);
  let end = start + 1;
  while (end < lines.length && !lines[end]?.startsWith('|')) end++;
  while (end < lines.length && lines[end]?.startsWith('|')) end++;
  const table = lines.slice(start + 1, end).join('\n');
  return settingRows(table, prefix).flatMap(({ names, cell }) => {
    const parts = names.length > 1 ? cell.split(/\s+\/\s+/) : [cell];
    if (parts.length !== 1 && parts.length !== names.length)
      throw new Error(`${names.join(' / ')}: ${parts.length} defaults for ${names.length} settings`);
    return names.map((name, i) => ({ name, text: (parts.length === 1 ? parts[0] : parts[i]) as string }));
  });
}

/**
 * What a default cell says. `— (required)` and `required…` = required; `—…` and `unset…` = no
 * default (`— (required with SASL_*)` is optional to the schema: a check across settings requires
 * it); otherwise the first `code` span, read as a boolean, a number (`_` and `,` separators
 * allowed) or a string (quotes dropped). A parenthesis after the value (`(35 days)`, `(≥ 100)`)
 * explains it and is not compared.
 */
export function documentedDefault(text: string): SettingDefault {
  const cell = text.trim();
  if (/^—\s*\(required\)$/.test(cell) || /^required\b/.test(cell)) return { kind: 'required' };
  if (/^(—|unset)(\s|:|$)/.test(cell)) return { kind: 'unset' };
  const code = /`([^`]*)`/.exec(cell)?.[1];
  if (code === undefined)
    throw new Error(`default ${JSON.stringify(cell)}: neither required, unset nor a \`value\``);
  if (code === 'true' || code === 'false') return { kind: 'value', value: code === 'true' };
  if (/^-?\d[\d_,]*(\.\d+)?$/.test(code)) return { kind: 'value', value: Number(code.replace(/[_,]/g, '')) };
  return { kind: 'value', value: code.replace(/^(['"])(.*)\1$/, '$2') };
}

/** What a schema field gives for an absent variable: a parse failure is required, `undefined` unset. */
export function schemaDefault(field: {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}): SettingDefault {
  const parsed = field.safeParse(undefined);
  if (!parsed.success) return { kind: 'required' };
  return parsed.data === undefined ? { kind: 'unset' } : { kind: 'value', value: parsed.data };
}

/** A default the table states as a phrase (computed at start), with the check of what the schema yields. */
export interface ComputedDefault {
  readonly phrase: string;
  holds(schema: SettingDefault): boolean;
}

type SchemaField = Parameters<typeof schemaDefault>[0];

/**
 * The documented settings whose default is not the schema's (names the schema lacks are left to
 * the caller's check of the names); `computed` defaults must be written as their phrase.
 */
export function defaultMismatches(
  documented: readonly DocumentedSetting[],
  shape: Readonly<Record<string, SchemaField>>,
  computed: Readonly<Record<string, ComputedDefault>> = {},
): { name: string; text: string; documented?: SettingDefault; schema: SettingDefault }[] {
  return documented.flatMap(({ name, text }) => {
    const field = shape[name];
    if (!field) return [];
    const schema = schemaDefault(field);
    const phrase = computed[name];
    if (phrase) return text === phrase.phrase && phrase.holds(schema) ? [] : [{ name, text, schema }];
    const stated = documentedDefault(text);
    return JSON.stringify(stated) === JSON.stringify(schema)
      ? []
      : [{ name, text, documented: stated, schema }];
  });
}
