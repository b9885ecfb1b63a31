import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONTRACT_FILE } from '@pda/api';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/**
 * The client's types, generated from the contract (api/openapi.yaml) with openapi-typescript's Node
 * API: `pnpm --filter @pda/client generate` writes them to GENERATED_FILE, and
 * tests/generated-types.test.ts fails when the committed file differs from a fresh generation.
 * Everything is read from the local file (no remote $ref), so generation works offline.
 */

export const GENERATED_FILE = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

const HEADER = `${COMMENT_HEADER}// Source: api/openapi.yaml. Regenerate with \`pnpm --filter @pda/client generate\`.\n\n`;

export async function generateTypes(contractFile: string = CONTRACT_FILE): Promise<string> {
  const ast = await openapiTS(readFileSync(contractFile, 'utf8'), { silent: true });
  return HEADER + astToString(ast);
}
