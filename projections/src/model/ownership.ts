/**
 * Which writer holds which company when writers are split by company (docs/scaling.md, "Split the
 * writer by company"; decision 0014). Every ingest and every api of a split deployment reads the
 * same ownership file, so they agree on where a company lives.
 *
 * A company's partition is the one Debezium's PartitionRouting transform sends its events to
 * (`partition.hash.function=java` on `change.company_id`): Java's String.hashCode of the id's
 * text, sign bit cleared, modulo the topic's partitions. The connector and this function must
 * agree; test/partitioned-topics.e2e.test.ts checks them against each other on the real connector.
 *
 * The file (JSON):
 *   { "partitions": 12,
 *     "writers": [
 *       { "name": "a", "api": "http://10.0.0.1:3000", "serves": [0, 2, 4, 6, 8, 10] },
 *       { "name": "b", "api": "http://10.0.0.2:3000", "serves": [1, 3, 5, 7, 9, 11], "builds": [] } ] }
 * `serves`: the partitions whose companies this writer applies and its api answers; every
 * partition is served by exactly one writer. `builds`: partitions a writer applies without serving
 * them yet (a writer being added: it catches up while the old owner still serves; then the
 * partitions move from one's `serves` to the other's).
 */
import { readFileSync } from 'node:fs';

export interface OwnershipWriter {
  readonly name: string;
  /** Base URL of the writer's api (its balancer, when the writer has replicas): where others forward. */
  readonly api: string;
  readonly serves: readonly number[];
  readonly builds: readonly number[];
}

export interface Ownership {
  readonly partitions: number;
  readonly writers: readonly OwnershipWriter[];
}

export class OwnershipError extends Error {
  override readonly name = 'OwnershipError';
}

const MAX_PARTITIONS = 10_000;

/** Java's String.hashCode over UTF-16 code units, as a signed 32-bit integer. */
export function javaStringHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
}

/** The partition Debezium's PartitionRouting (java hash, one field) gives a company's events. */
export function companyPartition(companyId: string, partitions: number): number {
  let normalized = javaStringHash(companyId) & 0x7fffffff;
  // PartitionRouting maps Integer.MAX_VALUE to 0 (computePartition).
  if (normalized === 0x7fffffff) normalized = 0;
  return normalized % partitions;
}

function fail(source: string, message: string): never {
  throw new OwnershipError(`ownership file ${source}: ${message}`);
}

function partitionList(value: unknown, where: string, partitions: number, source: string): number[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(source, `${where} must be an array of partition numbers`);
  const list: number[] = [];
  for (const item of value) {
    if (!Number.isInteger(item) || item < 0 || item >= partitions)
      fail(source, `${where} holds ${JSON.stringify(item)}: expected an integer from 0 to ${partitions - 1}`);
    if (list.includes(item)) fail(source, `${where} names partition ${item} twice`);
    list.push(item);
  }
  return list;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses and checks an ownership file's text; throws OwnershipError with one line saying what is wrong. */
export function parseOwnership(text: string, source = '(text)'): Ownership {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    fail(source, `not JSON (${(error as Error).message})`);
  }
  if (!isRecord(parsed)) fail(source, 'expected an object with "partitions" and "writers"');
  const { partitions, writers } = parsed;
  if (!Number.isInteger(partitions) || (partitions as number) < 1 || (partitions as number) > MAX_PARTITIONS)
    fail(source, `"partitions" must be an integer from 1 to ${MAX_PARTITIONS}`);
  const count = partitions as number;
  if (!Array.isArray(writers) || writers.length === 0) fail(source, '"writers" must be a non-empty array');
  const servedBy = new Map<number, string>();
  const out: OwnershipWriter[] = [];
  for (const [index, entry] of writers.entries()) {
    const at = `writers[${index}]`;
    if (!isRecord(entry)) fail(source, `${at} must be an object`);
    const { name, api } = entry;
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      fail(source, `${at}.name must be 1–64 letters, digits, '_', '.' or '-'`);
    if (out.some((w) => w.name === name)) fail(source, `two writers are named "${name}"`);
    if (typeof api !== 'string' || !URL.canParse(api) || !/^https?:$/.test(new URL(api).protocol))
      fail(source, `${at}.api must be an http(s) URL`);
    const serves = partitionList(entry.serves, `${at}.serves`, count, source);
    const builds = partitionList(entry.builds, `${at}.builds`, count, source);
    for (const p of serves) {
      const other = servedBy.get(p);
      if (other !== undefined) fail(source, `partition ${p} is served by both "${other}" and "${name}"`);
      servedBy.set(p, name);
    }
    for (const p of builds)
      if (serves.includes(p)) fail(source, `${at} both serves and builds partition ${p}`);
    out.push({ name, api: api.replace(/\/+$/, ''), serves, builds });
  }
  const unserved: number[] = [];
  for (let p = 0; p < count; p++) if (!servedBy.has(p)) unserved.push(p);
  if (unserved.length > 0) fail(source, `no writer serves partition(s) ${unserved.join(', ')}`);
  return { partitions: count, writers: out };
}

export function readOwnershipFile(file: string): Ownership {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new OwnershipError(
      `ownership file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
    );
  }
  return parseOwnership(text, file);
}

export function ownershipWriter(ownership: Ownership, name: string): OwnershipWriter {
  const writer = ownership.writers.find((w) => w.name === name);
  if (writer === undefined)
    throw new OwnershipError(
      `writer "${name}" is not in the ownership file (it names ${ownership.writers.map((w) => `"${w.name}"`).join(', ')})`,
    );
  return writer;
}

/** The writer whose api answers for a company. */
export function servingWriter(ownership: Ownership, companyId: string): OwnershipWriter {
  const partition = companyPartition(companyId, ownership.partitions);
  // parseOwnership guarantees every partition has exactly one server.
  return ownership.writers.find((w) => w.serves.includes(partition)) as OwnershipWriter;
}

/** The tenant partitions a writer applies: those it serves and those it builds. */
export function appliedPartitions(writer: OwnershipWriter): ReadonlySet<number> {
  return new Set([...writer.serves, ...writer.builds]);
}
