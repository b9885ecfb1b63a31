import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { GENERATED_FILE, generateTypes } from '../scripts/generate-types.ts';

// The committed types must be what the contract generates today: a change to api/openapi.yaml
// without `pnpm --filter @pda/api generate` fails here (and so in CI).
test('src/contract/generated/openapi.ts is up to date with api/openapi.yaml', async () => {
  const committed = readFileSync(GENERATED_FILE, 'utf8');
  const fresh = await generateTypes();
  expect(committed === fresh, 'stale: run `pnpm --filter @pda/api generate` and commit the result').toBe(
    true,
  );
});
