/**
 * Topic name → what it carries. Data topics are `<prefix>.public.<table>` (Debezium's
 * `<topic.prefix>.<schema>.<table>`); heartbeats go to `__debezium-heartbeat.<prefix>` and
 * transaction markers to `<prefix>.transaction` (cdc-stack-facts.md).
 */
import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';

export type TopicKind =
  | { readonly kind: 'table'; readonly table: SourceTable }
  | { readonly kind: 'heartbeat' }
  | { readonly kind: 'transaction' }
  | { readonly kind: 'uncaptured'; readonly name: string };

const TABLES: ReadonlySet<string> = new Set(SOURCE_TABLES);

export function classifyTopic(topic: string, prefix: string): TopicKind {
  if (topic === `__debezium-heartbeat.${prefix}`) return { kind: 'heartbeat' };
  if (topic === `${prefix}.transaction`) return { kind: 'transaction' };
  const tablePrefix = `${prefix}.public.`;
  if (topic.startsWith(tablePrefix)) {
    const table = topic.slice(tablePrefix.length);
    if (TABLES.has(table)) return { kind: 'table', table: table as SourceTable };
  }
  return { kind: 'uncaptured', name: topic };
}

/** Data topics of the captured tables, for subscribing by name. */
export function dataTopics(prefix: string): string[] {
  return SOURCE_TABLES.map((table) => `${prefix}.public.${table}`);
}
