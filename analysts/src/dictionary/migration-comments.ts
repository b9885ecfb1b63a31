import type { Migration } from '@pda/projections/model';

/**
 * Reads the comments of the numbered migrations (projections/src/migrations/<kind>/NNN-*.sql), the
 * one place where the meaning of every table and column is written down:
 *
 * - a table's description is the comment block right above its `CREATE TABLE` (the last one, when a
 *   later migration makes the table again; its "since" stays the first, as do its columns');
 * - a column's is the comment at the end of its line inside `CREATE TABLE`, continued by comment
 *   lines right below it, or for `ALTER TABLE … ADD COLUMN` the comment at the end of that line or
 *   else the block right above (one block may describe several consecutive ALTERs);
 * - the first block of a file may define columns several tables share, one per line as
 *   `--   <column>   <meaning>` with more-indented continuation lines;
 * - a trailing `[...]` of a description is the column's unit or format.
 *
 * A blank line ends a block. Nothing here executes SQL: types come from SQLite itself
 * (build-dictionary.ts), so a comment can never disagree with the schema about a type.
 */

export interface Described {
  readonly description: string;
  readonly unit: string | null;
  /** Number of the migration that first declared it. */
  readonly since: number;
}

export interface MigrationComments {
  readonly tables: ReadonlyMap<string, Described>;
  /** Columns with a comment of their own, keyed `<table>.<column>`. */
  readonly columns: ReadonlyMap<string, Described>;
  /** Every declared column, keyed `<table>.<column>`: the number of the migration that declared it. */
  readonly declared: ReadonlyMap<string, number>;
  /** Header definitions of shared columns, keyed by column name. */
  readonly shared: ReadonlyMap<string, Described>;
}

const IDENTIFIER = '[A-Za-z_][A-Za-z0-9_]*';
const CREATE_TABLE = new RegExp(`^CREATE TABLE\\s+(${IDENTIFIER})\\s*\\(`, 'i');
const ADD_COLUMN = new RegExp(`^ALTER TABLE\\s+(${IDENTIFIER})\\s+ADD COLUMN\\s+(${IDENTIFIER})\\b`, 'i');
const TABLE_CONSTRAINT = /^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)\b/i;
const DEFINITION = new RegExp(`^--\\s{2,}(${IDENTIFIER})\\s{2,}(\\S.*)$`);
const CONTINUATION = /^--\s{4,}(\S.*)$/;
const UNIT = /\s*\[([^\]]+)\]\s*\.?$/;

/** Splits a line into its SQL and its trailing `--` comment (the migrations hold no '--' in strings). */
function splitComment(line: string): { code: string; comment: string } {
  const at = line.indexOf('--');
  return at === -1
    ? { code: line.trim(), comment: '' }
    : { code: line.slice(0, at).trim(), comment: line.slice(at + 2).trim() };
}

/** Joins comment lines into one description and takes its trailing `[unit]` off. */
export function describe(lines: readonly string[], since: number, column?: string): Described {
  let text = lines.join(' ').replace(/\s+/g, ' ').trim();
  // A block written for one column may start with its name ("_json: the record's JSON ...").
  if (column !== undefined && text.startsWith(`${column}: `)) text = text.slice(column.length + 2);
  const unit = UNIT.exec(text);
  if (unit) text = text.slice(0, unit.index).trim();
  return { description: text, unit: unit?.[1]?.trim() ?? null, since };
}

export function readMigrationComments(migrations: readonly Migration[]): MigrationComments {
  const tables = new Map<string, Described>();
  const columnLines = new Map<string, { lines: string[]; since: number }>();
  const sharedLines = new Map<string, { lines: string[]; since: number }>();

  for (const { version, sql } of migrations) {
    let block: string[] = [];
    let alterBlock: string[] | null = null;
    let inHeader = true;
    let definition: string[] | null = null;
    let table: string | null = null;
    let column: string[] | null = null;

    for (const raw of sql.split('\n')) {
      const line = raw.trim();
      if (table !== null) {
        if (line.startsWith(')')) {
          table = null;
          column = null;
        } else if (line.startsWith('--')) {
          column?.push(line.slice(2).trim());
        } else if (line !== '') {
          const { code, comment } = splitComment(line);
          const name = new RegExp(`^(${IDENTIFIER})\\s`).exec(code)?.[1];
          if (TABLE_CONSTRAINT.test(code) || name === undefined) {
            column = null;
          } else {
            column = comment === '' ? [] : [comment];
            // A table made again by a later migration keeps the version its columns first came in.
            const since = columnLines.get(`${table}.${name}`)?.since ?? version;
            columnLines.set(`${table}.${name}`, { lines: column, since });
          }
        }
        continue;
      }
      if (line === '') {
        block = [];
        alterBlock = null;
        inHeader = false;
        definition = null;
        continue;
      }
      if (line.startsWith('--')) {
        if (inHeader) {
          const start = DEFINITION.exec(line);
          const more = CONTINUATION.exec(line);
          if (start?.[1] !== undefined && start[2] !== undefined) {
            definition = [start[2]];
            if (!sharedLines.has(start[1])) sharedLines.set(start[1], { lines: definition, since: version });
          } else if (definition !== null && more?.[1] !== undefined) {
            definition.push(more[1]);
          } else {
            definition = null;
          }
        }
        block.push(line.slice(2).trim());
        continue;
      }
      inHeader = false;
      definition = null;
      const created = CREATE_TABLE.exec(line);
      if (created?.[1] !== undefined) {
        table = created[1];
        tables.set(table, { ...describe(block, version), since: tables.get(table)?.since ?? version });
        block = [];
        alterBlock = null;
        column = null;
        continue;
      }
      const added = ADD_COLUMN.exec(line);
      if (added?.[1] !== undefined && added[2] !== undefined) {
        alterBlock ??= block;
        block = [];
        const { comment } = splitComment(line);
        columnLines.set(`${added[1]}.${added[2]}`, {
          lines: comment === '' ? [...alterBlock] : [comment],
          since: version,
        });
        continue;
      }
      block = [];
      alterBlock = null;
    }
  }

  const columns = new Map<string, Described>();
  const declared = new Map<string, number>();
  for (const [key, { lines, since }] of columnLines) {
    declared.set(key, since);
    if (lines.length > 0) columns.set(key, describe(lines, since, key.slice(key.indexOf('.') + 1)));
  }
  const shared = new Map<string, Described>();
  for (const [name, { lines, since }] of sharedLines) shared.set(name, describe(lines, since));
  return { tables, columns, declared, shared };
}
