/**
 * The first tokens of a SQL statement, read the way SQLite's tokenizer reads them (whitespace and
 * both kinds of comments skipped; identifiers bare or quoted with "", [], `` or ''), as far as the
 * read-only check (read-only-statement.ts) needs: which statement it is, and for a PRAGMA (also
 * after EXPLAIN [QUERY PLAN]) its name and whether it has an argument.
 */

export type Token =
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'quoted'; readonly text: string }
  | { readonly kind: 'punct'; readonly text: string }
  | { readonly kind: 'end' };

const SPACE = /[ \t\n\f\r]/;
const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
const CLOSE: Readonly<Record<string, string>> = { '"': '"', "'": "'", '`': '`', '[': ']' };

/** The tokens of `sql` from its start; `limit` tokens at most (the check reads only a few). */
export function leadingTokens(sql: string, limit: number): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (tokens.length < limit) {
    for (;;) {
      if (i < sql.length && SPACE.test(sql.charAt(i))) i++;
      else if (sql.startsWith('--', i)) {
        const end = sql.indexOf('\n', i);
        i = end === -1 ? sql.length : end + 1;
      } else if (sql.startsWith('/*', i)) {
        const end = sql.indexOf('*/', i + 2);
        i = end === -1 ? sql.length : end + 2;
      } else break;
    }
    if (i >= sql.length) {
      tokens.push({ kind: 'end' });
      break;
    }
    const c = sql.charAt(i);
    const close = CLOSE[c];
    if (close !== undefined) {
      // A doubled closing quote stands for one (not in [] identifiers).
      let text = '';
      let j = i + 1;
      for (;;) {
        const end = sql.indexOf(close, j);
        if (end === -1) {
          text += sql.slice(j);
          j = sql.length;
          break;
        }
        text += sql.slice(j, end);
        if (close !== ']' && sql.charAt(end + 1) === close) {
          text += close;
          j = end + 2;
        } else {
          j = end + 1;
          break;
        }
      }
      tokens.push({ kind: 'quoted', text });
      i = j;
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < sql.length && WORD.test(sql.charAt(j))) j++;
      tokens.push({ kind: 'word', text: sql.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return tokens;
}

export interface StatementHead {
  /** The first keyword, upper-cased ('' for an empty statement). */
  readonly keyword: string;
  /** The PRAGMA the statement runs (directly or under EXPLAIN), if any. */
  readonly pragma?: {
    /** Lower-case, without its schema. */
    readonly name: string;
    /** `PRAGMA x` (a query), `PRAGMA x(…)`, `PRAGMA x = …`, or anything else after the name. */
    readonly form: 'query' | 'call' | 'assign' | 'other';
  };
}

const isWord = (token: Token | undefined, word: string): boolean =>
  token?.kind === 'word' && token.text.toUpperCase() === word;

const nameOf = (token: Token | undefined): string | undefined =>
  token?.kind === 'word' || token?.kind === 'quoted' ? token.text.toLowerCase() : undefined;

export function statementHead(sql: string): StatementHead {
  const tokens = leadingTokens(sql, 12);
  const first = tokens[0];
  const keyword = first?.kind === 'word' ? first.text.toUpperCase() : first?.kind === 'end' ? '' : '?';
  let at = 0;
  if (keyword === 'EXPLAIN') {
    at = 1;
    if (isWord(tokens[1], 'QUERY') && isWord(tokens[2], 'PLAN')) at = 3;
  }
  if (!isWord(tokens[at], 'PRAGMA')) return { keyword };
  // PRAGMA [schema.]name [= value | (value)]
  let name = nameOf(tokens[at + 1]);
  let next = tokens[at + 2];
  if (next?.kind === 'punct' && next.text === '.') {
    name = nameOf(tokens[at + 3]);
    next = tokens[at + 4];
  }
  const form =
    name === undefined
      ? 'other'
      : next?.kind === 'end' || (next?.kind === 'punct' && next.text === ';')
        ? 'query'
        : next?.kind === 'punct' && next.text === '('
          ? 'call'
          : next?.kind === 'punct' && next.text === '='
            ? 'assign'
            : 'other';
  return { keyword, pragma: { name: name ?? '', form } };
}
