/**
 * ingest/README.md's Configuration table is the one list of INGEST_* settings an operator reads:
 * it names exactly the settings of ConfigSchema (src/config.ts), each with the schema's default,
 * and no other table of the README names a setting (one table, not two to keep in step).
 */
import { readFileSync } from 'node:fs';
import {
  defaultMismatches,
  documentedSettings,
  type schemaDefault,
  settingRows,
} from '@pda/projections/testing';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../src/config.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const HEADING = '## Configuration';
const documented = documentedSettings(readme, HEADING, 'INGEST_');
const shape: Record<string, Parameters<typeof schemaDefault>[0]> = ConfigSchema.shape;

describe('ingest/README.md Configuration table', () => {
  it('names every setting of the schema, once, and no other', () => {
    const names = documented.map((s) => s.name);
    expect(names.length, 'a setting documented twice').toBe(new Set(names).size);
    expect([...names].sort()).toEqual(Object.keys(shape).sort());
  });

  it("states each setting's default as the schema has it", () => {
    // A name the schema lacks is the test above's failure; here only the defaults are compared.
    expect(defaultMismatches(documented, shape)).toEqual([]);
  });

  it('is the only table naming INGEST_ settings', () => {
    // Every row naming a setting, anywhere in the README, is one of the table's.
    const everywhere = settingRows(readme, 'INGEST_').flatMap((row) => row.names);
    expect(everywhere).toHaveLength(documented.length);
  });
});
