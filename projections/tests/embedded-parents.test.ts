import { RESOURCES, type ResourceDef, TABLE_NAMES } from '@pda/schemas/registry';
import { describe, expect, it } from 'vitest';
import { embeddingsOf, parentColumns } from '../src/write/apply/embedded-parents.ts';

// Which parents a row change moves (src/write/apply/embedded-parents.ts) is read from the
// registry's relations, not from table names in the write engine: every relation has its
// embedding, and no table has one without a relation.
describe('embedded parents from the registry', () => {
  const relations = (Object.values(RESOURCES) as ResourceDef[]).flatMap((resource) =>
    Object.values(resource.relations).map((relation) => ({ parent: resource.table, ...relation })),
  );

  it('every relation of every resource is an embedding of its table', () => {
    expect(relations.length).toBeGreaterThan(0);
    for (const { parent, table, cardinality, key } of relations) {
      expect(embeddingsOf(table)).toContainEqual({ parent, cardinality, key });
    }
  });

  it('a table no relation embeds has no parents', () => {
    const embedded = new Set(relations.map((relation) => relation.table));
    for (const table of TABLE_NAMES.filter((name) => !embedded.has(name))) {
      expect(embeddingsOf(table)).toEqual([]);
      expect(parentColumns(table)).toEqual([]);
    }
  });

  it("reads the parent's key of a 'many' relation from the embedded row", () => {
    for (const { table, cardinality, key } of relations) {
      expect(parentColumns(table).includes(key)).toBe(cardinality === 'many');
    }
  });
});
