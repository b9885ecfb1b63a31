import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { quoteIdent } from '../src/model/quote-ident.ts';

describe('quoteIdent', () => {
  it('doubles embedded quotes, so a name stays one identifier in SQLite', () => {
    expect(quoteIdent('sites')).toBe('"sites"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    const db = new Database(':memory:');
    const name = 'x"; DROP TABLE t; --';
    db.exec(`CREATE TABLE t (${quoteIdent(name)} TEXT)`);
    expect(db.prepare('PRAGMA table_info(t)').all()).toMatchObject([{ name }]);
    db.close();
  });
});
