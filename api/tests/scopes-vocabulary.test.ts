import { SCOPES as KEY_CLI_SCOPES } from '@pda/operator-tools/scopes';
import { expect, test } from 'vitest';
import { loadContract } from '../src/contract/load-contract.ts';
import { SCOPES } from '../src/routes/scopes.ts';

// One scope vocabulary: what /v1/reference/scopes lists, what the key CLI accepts, and what the
// contract's operations require.

test('the api and the key CLI know the same scopes', () => {
  expect(SCOPES).toEqual(KEY_CLI_SCOPES);
});

test('every scope an operation requires is in the vocabulary', () => {
  const names = SCOPES.map((entry) => entry.scope);
  for (const operation of loadContract().operations.values()) {
    for (const scope of operation.scopes) expect(names).toContain(scope);
  }
});
