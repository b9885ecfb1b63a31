import { describe, expect, it } from 'vitest';
import { companyOrder } from '../src/write/plan/company-order.ts';
import { emptyPlan, type Plan } from '../src/write/plan/plan.ts';
import { A, B, C } from './helpers.ts';

const D = 'dddddddd-0000-4000-8000-00000000000d';

/** A plan touching `companies` (in that order), where each [first, then] pair must keep its order. */
function plan(companies: readonly string[], precedes: readonly [string, string][] = []): Plan {
  const p = emptyPlan();
  for (const companyId of companies) p.companies.set(companyId, []);
  for (const [first, then] of precedes) {
    const after = p.precedes.get(first) ?? new Set<string>();
    after.add(then);
    p.precedes.set(first, after);
  }
  return p;
}

describe('companyOrder', () => {
  it.each([
    {
      name: 'independent companies: open files first, each group in plan order',
      open: [C, A],
      precedes: [],
      expected: [A, C, B, D],
    },
    {
      name: 'the file a moved row left waits for the file that receives it, even when open',
      open: [A],
      precedes: [[B, A]] as [string, string][],
      expected: [B, A, C, D],
    },
    {
      name: 'a file waits for every file that receives rows from it (A → B → C), then goes at once',
      open: [A, D],
      precedes: [
        [B, A],
        [C, A],
      ] as [string, string][],
      expected: [D, B, C, A],
    },
  ])('$name', ({ open, precedes, expected }) => {
    expect(companyOrder(plan([A, B, C, D], precedes), (id) => open.includes(id))).toEqual(expected);
  });

  it('refuses a cycle (planning cuts the batch before one)', () => {
    expect(() =>
      companyOrder(
        plan(
          [A, B],
          [
            [A, B],
            [B, A],
          ],
        ),
        () => false,
      ),
    ).toThrow(/cycle/);
  });
});
