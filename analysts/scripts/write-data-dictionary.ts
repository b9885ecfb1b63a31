// `pnpm --filter @pda/analysts dictionary`: writes docs/data-dictionary.md from the migrations and
// the table registry (src/dictionary/). Run it after changing a migration's comments, a table or
// the registry; analysts/tests/data-dictionary.test.ts fails until the file is current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCli } from '@pda/projections/cli';
import { buildDictionary } from '../src/dictionary/build-dictionary.ts';
import { DICTIONARY_DOC, renderMarkdown } from '../src/dictionary/render-markdown.ts';

await runCli(`usage: pnpm --filter @pda/analysts dictionary`, async () => {
  const path = fileURLToPath(new URL(`../../${DICTIONARY_DOC}`, import.meta.url));
  const dictionary = buildDictionary();
  writeFileSync(path, renderMarkdown(dictionary));
  process.stdout.write(`wrote ${DICTIONARY_DOC} (${dictionary.tables.length} tables)\n`);
});
