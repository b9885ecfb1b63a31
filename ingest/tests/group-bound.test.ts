import { describe, expect, it } from 'vitest';
import { createGroupBound, EVENTS_PER_COMPANY } from '../src/batch/group-bound.ts';

// The in-flight bound follows the width of the last apply call (src/batch/group-bound.ts).
describe('group bound', () => {
  it('starts at the base and stays there while apply calls touch few companies', () => {
    const bound = createGroupBound(20_000, 160_000);
    expect(bound.current()).toBe(20_000);
    bound.observe(10);
    expect(bound.current()).toBe(20_000);
  });

  it('grows to ~20 events per company touched, up to the wide bound, and comes back down', () => {
    const bound = createGroupBound(20_000, 160_000);
    bound.observe(5_000);
    expect(bound.current()).toBe(5_000 * EVENTS_PER_COMPANY);
    bound.observe(50_000);
    expect(bound.current()).toBe(160_000);
    bound.observe(300);
    expect(bound.current()).toBe(20_000);
  });

  it('a wide bound below the base leaves the base', () => {
    const bound = createGroupBound(20_000, 1_000);
    bound.observe(5_000);
    expect(bound.current()).toBe(20_000);
  });
});
