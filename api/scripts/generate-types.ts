import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { CONTRACT_FILE } from '../src/contract/load-contract.ts';

/**
 * The contract's types, generated from api/openapi.yaml with openapi-typescript's Node API: the
 * api's route handlers (src/contract/operation-types.ts) and the client (`@pda/api/contract-types`)
 * are typed from this one file. `pnpm --filter @pda/api generate` writes it to GENERATED_FILE, and
 * tests/generated-types.test.ts fails when the committed file differs from a fresh generation.
 * Everything is read from the local file (no remote $ref), so generation works offline.
 */

export const GENERATED_FILE = fileURLToPath(new URL('../src/contract/generated/openapi.ts', import.meta.url));

const HEADER = `${COMMENT_HEADER}// Source: api/openapi.yaml. Regenerate with \`pnpm --filter @pda/api generate\`.\n\n`;

export async function generateTypes(contractFile: string = CONTRACT_FILE): Promise<string> {
  const ast = await openapiTS(readFileSync(contractFile, 'utf8'), { silent: true });
  return HEADER + astToString(ast);
}
