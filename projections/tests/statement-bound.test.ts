import { describe, expect, it } from 'vitest';
import { StatementCounts, StatementLru, type UpsertChange } from '../src/model/index.ts';
import { openCompanyReader, ReadHandle } from '../src/read/index.ts';
import { buildProjection, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { A, dump, fixedClock, id, tempDataDir } from './helpers.ts';

// Prepared statements per open handle are bounded (src/model/statement-lru.ts): a handle asked for more
// shapes than its bound keeps at most the bound, prepares an evicted shape again on its next use,
// and answers exactly as with every statement kept.

describe('StatementLru', () => {
  it('keeps the most recently used, counts what it drops and what it holds', () => {
    const counts = new StatementCounts();
    const lru = new StatementLru(2, counts);
    let prepared = 0;
    const prepare = () => {
      prepared++;
      return {} as never;
    };
    const a = lru.get('a', prepare);
    lru.get('b', prepare);
    expect(lru.get('a', prepare)).toBe(a); // held: not prepared again, and now the most recent
    lru.get('c', prepare); // drops b
    expect(prepared).toBe(3);
    expect(counts).toMatchObject({ held: 2, evicted: 1 });
    lru.get('b', prepare);
    expect(prepared).toBe(4);
    expect(counts).toMatchObject({ held: 2, evicted: 2 });
    lru.clear();
    expect(counts).toMatchObject({ held: 0, evicted: 2 });
  });
});

describe('a read handle asked for more shapes than its bound', () => {
  const sites = [5, 3, 8, 1, 9, 2, 7].map((n) => ({ id: id(n), name: `site ${n}` }));

  function company(): string {
    const dir = tempDataDir();
    buildProjection(
      dir,
      sites.map((s, i) => makeUpsert('sites', sampleRow('sites', { ...s, company_id: A }), i + 1)),
    );
    return dir;
  }

  it('keeps at most the bound, and every shape, evicted or not, answers what it should', () => {
    const dir = company();
    const counts = new StatementCounts();
    const handle = new ReadHandle(openCompanyReader(dir, A), { maxStatements: 4, counts });
    // 20 shapes (as sort × limit × direction would make), asked for twice: the second round finds
    // almost all of them evicted and prepares them again.
    const shape = (n: number) => ({
      key: `sites:${n}`,
      sql: `SELECT name FROM sites ORDER BY id ${n % 2 ? 'DESC' : 'ASC'} LIMIT ${1 + (n % 7)}`,
      expected: [...sites]
        .sort((x, y) => (n % 2 ? y.id.localeCompare(x.id) : x.id.localeCompare(y.id)))
        .slice(0, 1 + (n % 7))
        .map((s) => s.name),
    });
    try {
      for (const round of [1, 2]) {
        for (let n = 0; n < 20; n++) {
          const { key, sql, expected } = shape(n);
          const rows = handle
            .statement(key, () => sql)
            .pluck()
            .all();
          expect(rows, `round ${round}, shape ${n}`).toEqual(expected);
          expect(handle.statementCount).toBeLessThanOrEqual(4);
        }
      }
      // A snapshot's BEGIN and COMMIT are statements too: they come back when evicted.
      expect(
        handle.snapshot(() =>
          handle
            .statement('count', () => 'SELECT count(*) FROM sites')
            .pluck()
            .get(),
        ),
      ).toBe(sites.length);
      expect(counts.held).toBe(4);
      expect(counts.evicted).toBeGreaterThanOrEqual(40 - 4);
    } finally {
      handle.close();
    }
    expect(counts.held).toBe(0);
  });
});

describe('the writer with a small statement bound', () => {
  // Each set of columns Debezium could not send is an upsert statement of its own (table-spec.ts upsertStatement).
  const UNAVAILABLE = [[], ['notes'], ['city'], ['notes', 'city'], ['region'], ['postal_code'], ['area']];

  function changes(): UpsertChange[] {
    const out: UpsertChange[] = [makeUpsert('companies', sampleRow('companies', { id: A }), 1)];
    let lsn = 2;
    for (let round = 0; round < 3; round++) {
      UNAVAILABLE.forEach((unavailable, i) => {
        const row = sampleRow('sites', {
          id: id(i + 1),
          company_id: A,
          notes: `notes ${round}`,
          city: `city ${round}`,
          region: `R${round}`,
        });
        out.push(makeUpsert('sites', row, lsn++, round === 0 ? {} : { op: 'u', unavailable }));
      });
    }
    return out;
  }

  it('holds at most the bound per open file, evicts, and writes the same rows as an unbounded one', () => {
    const bounded = tempDataDir();
    const reference = tempDataDir();
    const small = ProjectionStore.open({ dataDir: bounded, clockUs: fixedClock(), maxStatementsPerFile: 2 });
    const large = ProjectionStore.open({ dataDir: reference, clockUs: fixedClock() });
    try {
      let evicted = 0;
      for (const change of changes()) {
        // One change per batch: the shapes alternate, so the small caches keep evicting.
        const result = small.applyBatch([change]);
        evicted += result.statements.evicted;
        // control.sqlite and company A's file, at most two statements each.
        expect(result.statements.held).toBeLessThanOrEqual(2 * 2);
        expect(result.statements.maxPerFile).toBe(2);
        large.applyBatch([change]);
      }
      expect(evicted).toBeGreaterThan(UNAVAILABLE.length);
    } finally {
      small.close();
      large.close();
    }
    expect(dump(bounded)).toEqual(dump(reference));
  });
});
