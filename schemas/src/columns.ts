// A flat description of each column of an .avsc: what the catalog test compares with PostgreSQL
// and what a consumer needs without walking Avro unions.
import type { AvroRecordSchema } from './load.ts';
import { ZONED_TIMESTAMP } from './logical-types.ts';

export type ColumnKind = 'uuid' | 'string' | 'int' | 'decimal' | 'zoned-timestamp' | 'string-array';

export interface ColumnSpec {
  name: string;
  nullable: boolean;
  kind: ColumnKind;
  /** PostgreSQL's format_type() of the column, e.g. numeric(12,2), character(3), text[] */
  pgType: string;
  precision?: number;
  scale?: number;
}

type Node = string | { type?: unknown; logicalType?: unknown; items?: unknown; [k: string]: unknown };

function kindOf(node: Node): Pick<ColumnSpec, 'kind' | 'precision' | 'scale'> {
  if (node === 'string') return { kind: 'string' };
  if (node === 'int') return { kind: 'int' };
  if (typeof node === 'object') {
    if (node.logicalType === 'uuid') return { kind: 'uuid' };
    if (node.logicalType === 'decimal') {
      return { kind: 'decimal', precision: Number(node.precision), scale: Number(node.scale ?? 0) };
    }
    if (node['connect.name'] === ZONED_TIMESTAMP) return { kind: 'zoned-timestamp' };
    if (node.type === 'array' && node.items === 'string') return { kind: 'string-array' };
  }
  throw new Error(`unsupported Avro type ${JSON.stringify(node)}`);
}

export function columnsOf(json: AvroRecordSchema): ColumnSpec[] {
  return json.fields.map((field) => {
    const union = Array.isArray(field.type) ? (field.type as Node[]) : undefined;
    const nullable = union?.includes('null') ?? false;
    const inner = union ? union.find((t) => t !== 'null') : (field.type as Node);
    if (inner === undefined) throw new Error(`field ${field.name} has no non-null type`);
    return { name: field.name, nullable, pgType: field['pg.type'], ...kindOf(inner) };
  });
}
