// The nine tables Debezium captures (topics pda.public.<table>), one .avsc each in schemas/.
export const CAPTURED_TABLES = [
  'companies',
  'api_keys',
  'api_key_companies',
  'sites',
  'site_contacts',
  'services',
  'equipment_categories',
  'equipment',
  'consumables',
] as const;

export type CapturedTable = (typeof CAPTURED_TABLES)[number];

export function isCapturedTable(value: string): value is CapturedTable {
  return (CAPTURED_TABLES as readonly string[]).includes(value);
}
