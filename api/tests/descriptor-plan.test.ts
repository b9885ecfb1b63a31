import { describe, expect, it } from 'vitest';
import { descriptorPlan } from '../src/connections/descriptor-plan.ts';

// How the api spends its open-file limit (src/connections/descriptor-plan.ts).
describe('descriptorPlan', () => {
  it.each([
    // limit, reserve, connections
    [20_000, 2048, 2008],
    [1_048_576, 2048, 2008],
    [1024, 512, 472],
    [96, 48, 8],
    [64, 32, 1],
    [undefined, 512, 472],
  ])('limit %s → reserve %s, %s connections', (limit, reserve, maxConnections) => {
    expect(descriptorPlan(limit)).toEqual({ limit, reserve, maxConnections });
  });
});
