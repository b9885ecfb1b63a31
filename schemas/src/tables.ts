// The tables Debezium captures (topics pda.public.<table>), one .avsc each in schemas/: the
// registry's table list (./registry.ts).
import { TABLE_NAMES, type TableName } from './registry.ts';

export const CAPTURED_TABLES: readonly TableName[] = TABLE_NAMES;

export type CapturedTable = TableName;

export function isCapturedTable(value: string): value is CapturedTable {
  return (CAPTURED_TABLES as readonly string[]).includes(value);
}
