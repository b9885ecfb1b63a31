import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCE_NAMES } from '@pda/schemas/registry';
import { afterAll, describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { CONTRACT_FILE, loadContract } from '../src/contract/load-contract.ts';
import { testConfig } from './support/test-app.ts';

// docs/public-data-api-v1.md, "Versioning" 2: routes and contract operations must match one to one.
const dir = mkdtempSync(join(tmpdir(), 'pda-inventory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('route inventory', () => {
  test('the served routes are exactly the contract operations', async () => {
    const app = await buildApp(testConfig(dir), { logger: false });
    await app.ready();
    const served = app.routeInventory.map((route) => `${route.method} ${route.path}`).sort();
    const documented = [...loadContract().operations.values()].map((op) => `${op.method} ${op.path}`).sort();
    expect(served).toEqual(documented);
    // health, version, me, reference/scopes, deletions, changes, plus a list and an item route per registry resource.
    expect(served).toHaveLength(6 + 2 * RESOURCE_NAMES.length);
    await app.close();
  });

  test('an operation without a route stops the app from starting', async () => {
    const file = join(dir, 'extra-operation.yaml');
    const text = readFileSync(CONTRACT_FILE, 'utf8').replace(
      '\n  /v1/me:\n',
      "\n  /v1/parties:\n    get:\n      operationId: listParties\n      responses:\n        '200':\n          description: x\n  /v1/me:\n",
    );
    writeFileSync(file, text);
    const app = await buildApp(testConfig(dir), { logger: false, contractFile: file });
    await expect(app.ready()).rejects.toThrow('in the contract but not served: GET /v1/parties');
  });

  test('a route missing from the contract stops the app from starting', async () => {
    const file = join(dir, 'missing-operation.yaml');
    copyFileSync(CONTRACT_FILE, file);
    const text = readFileSync(file, 'utf8');
    const start = text.indexOf('\n  /v1/reference/scopes:\n');
    const end = text.indexOf('\n  /v1/sites:\n');
    writeFileSync(file, text.slice(0, start) + text.slice(end));
    // The scopes route file asks the contract for its operation: the build fails at registration.
    await expect(buildApp(testConfig(dir), { logger: false, contractFile: file })).rejects.toThrow(
      'no operation listScopes',
    );
  });
});
