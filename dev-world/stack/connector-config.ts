// Company-keyed partitions (PDA_DATA_PARTITIONS, dev-world/stack/README.md, "Partitioned topics") for the
// connectors that TypeScript registers (the testcontainers stack, tests' and benchmarks' private
// connectors): the settings dev-world/stack/connector-partitioned.json adds to connector.json, as
// dev-world/stack/lib/connect.sh and dev-world/stack/compose/register-connector.sh add them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const overlayFile = join(import.meta.dirname, 'connector-partitioned.json');

/** The placeholder of dev-world/stack/connector-partitioned.json's values that are the partition count. */
const PARTITIONS_PLACEHOLDER = '__PDA_DATA_PARTITIONS__';

/**
 * A partition count for the tenant topics: a whole number from 1 to 10,000 (PDA_DATA_PARTITIONS,
 * dev-world/stack/README.md, "Partitioned topics"); throws one line saying what is wrong otherwise.
 */
export function dataPartitions(value: string | undefined = process.env.PDA_DATA_PARTITIONS): number {
  if (value === undefined || value === '') return 1;
  const n = /^[1-9][0-9]{0,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= 10_000))
    throw new Error(`PDA_DATA_PARTITIONS='${value}': expected a whole number from 1 to 10000`);
  return n;
}

/**
 * The settings dev-world/stack/connector-partitioned.json adds for `partitions` > 1 (company-keyed
 * partitions), the placeholder replaced by the count, as dev-world/stack/lib/connect.sh and
 * dev-world/stack/compose/register-connector.sh add them; {} for 1.
 */
export function partitionedConnectorOverlay(partitions: number): Record<string, string> {
  dataPartitions(String(partitions));
  if (partitions === 1) return {};
  const overlay = JSON.parse(readFileSync(overlayFile, 'utf8')) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(overlay).map(([name, value]) => [
      name,
      value === PARTITIONS_PLACEHOLDER ? String(partitions) : value,
    ]),
  );
}
