import { writeFileSync } from 'node:fs';
import { GENERATED_FILE, generateTypes } from './generate-types.ts';

// `pnpm --filter @pda/api generate`: rewrites src/contract/generated/openapi.ts from api/openapi.yaml.
writeFileSync(GENERATED_FILE, await generateTypes());
console.log(`wrote ${GENERATED_FILE}`);
