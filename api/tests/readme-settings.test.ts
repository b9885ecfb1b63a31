/**
 * api/README.md's Configuration table is the one list of API_* settings an operator reads: it
 * names exactly the settings of ConfigSchema (src/config.ts), each with the schema's default, and
 * no other table of the README names a setting (one table, not two to keep in step).
 */
import { readFileSync } from 'node:fs';
import {
  type ComputedDefault,
  defaultMismatches,
  documentedSettings,
  type schemaDefault,
  settingRows,
} from '@pda/projections/testing';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const documented = documentedSettings(readme, '## Configuration', 'API_');
const shape: Record<string, Parameters<typeof schemaDefault>[0]> = ConfigSchema.shape;

/**
 * Defaults computed at start, so the table says how rather than a value; each phrase is checked
 * here against what the schema yields.
 */
const COMPUTED: Record<string, ComputedDefault> = {
  // Unset in the schema; parseConfig builds it from API_HOST and API_PORT.
  API_PUBLIC_BASE_URL: { phrase: '`http://<host>:<port>`', holds: (d) => d.kind === 'unset' },
  // An absolute path, resolved from src/config.ts's own location: the table names it from the root.
  API_BUILD_INFO_FILE: {
    phrase: '`api/build-info.json`',
    holds: (d) => d.kind === 'value' && String(d.value).endsWith('/api/build-info.json'),
  },
};

describe('api/README.md Configuration table', () => {
  it('names every setting of the schema, once, and no other', () => {
    const names = documented.map((s) => s.name);
    expect(names.length, 'a setting documented twice').toBe(new Set(names).size);
    expect([...names].sort()).toEqual(Object.keys(shape).sort());
  });

  it("states each setting's default as the schema has it", () => {
    // A name the schema lacks is the test above's failure; here only the defaults are compared.
    expect(defaultMismatches(documented, shape, COMPUTED)).toEqual([]);
  });

  it('is the only table naming API_ settings', () => {
    // Every row naming a setting, anywhere in the README, is one of the table's.
    const everywhere = settingRows(readme, 'API_').flatMap((row) => row.names);
    expect(everywhere).toHaveLength(documented.length);
  });
});
