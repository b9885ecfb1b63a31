/**
 * Does a writer schema still fit the projection of its table? The registry's compatibility rule
 * (BACKWARD_TRANSITIVE, dev-world/stack/README.md) is about Avro: it lets a NUMERIC(12,2) become
 * NUMERIC(12,4) (both `bytes`) and refuses nothing a registry without rules accepts. The projection
 * needs each column of schemas/<table>.avsc with the same kind of value, so a version that drops one
 * or changes its kind (text → integer, a decimal's scale) cannot be applied: its events are dead
 * letters naming the column, instead of rows stored with the wrong meaning. Columns the .avsc does
 * not know (one added at the source) are fine: the projection ignores them until it is taught.
 */
import type { ColumnType } from './column-type.ts';

function describe(type: ColumnType): string {
  switch (type.kind) {
    case 'decimal':
      return type.scale === undefined ? 'decimal' : `decimal(scale ${type.scale})`;
    case 'array':
      return `array of ${describe(type.items)}`;
    case 'plain':
      return 'string';
    case 'epoch-timestamp':
    case 'timestamp':
    case 'zoned-timestamp':
      return 'timestamp';
    default:
      return type.kind;
  }
}

function fits(writer: ColumnType, expected: ColumnType): boolean {
  // Timestamps in any of Debezium's encodings decode to the same ISO UTC string.
  const family = (t: ColumnType) =>
    t.kind === 'epoch-timestamp' || t.kind === 'timestamp' ? 'zoned-timestamp' : t.kind;
  if (family(writer) !== family(expected)) return false;
  if (writer.kind === 'decimal' && expected.kind === 'decimal') {
    // A variable-scale decimal carries its scale in each value: exact whatever it is.
    return writer.encoding === 'variable' || expected.scale === undefined || writer.scale === expected.scale;
  }
  if (writer.kind === 'array' && expected.kind === 'array') return fits(writer.items, expected.items);
  return true;
}

export function incompatibility(
  writer: ReadonlyMap<string, ColumnType>,
  expected: ReadonlyMap<string, ColumnType>,
): string | undefined {
  const problems: string[] = [];
  for (const [column, type] of expected) {
    const found = writer.get(column);
    if (!found) problems.push(`column '${column}' is missing`);
    else if (!fits(found, type)) {
      problems.push(`column '${column}' is ${describe(found)}, expected ${describe(type)}`);
    }
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}
