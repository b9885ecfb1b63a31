/**
 * Changes across the thread boundary (threaded-sink.ts → apply thread) as flat arrays.
 *
 * postMessage structured-clones its argument; for Change objects it writes every property name of
 * every row and the receiver rebuilds each object from that, which cost about as much as applying
 * the change. Rows of one table share their column names, so the names are sent once per batch
 * ("shapes") and each change becomes one array of primitives: less than half the cost, most of the
 * saving on the apply thread (the flat-array transfer of bench/results/ingest-2026-11-22.md, "After
 * group commit and the decoupled pipeline").
 */
import type { Change, ColumnValue, MessageOrigin, Row, SourceTable } from '@pda/projections/model';

export interface WireBatch {
  /** Column-name lists of keys and of rows, referenced by index from the changes. */
  readonly keyShapes: readonly (readonly string[])[];
  readonly rowShapes: readonly (readonly string[])[];
  readonly topics: readonly string[];
  readonly changes: readonly WireChange[];
}

const UPSERT = 0;
const DELETE = 1;
const TRUNCATE = 2;

/**
 * [kind, table, lsn, tsMs, topic index (-1: no origin), partition, offset, op, unavailable (0: none),
 *  key shape, key values, row shape, ...row values]; a truncate stops after the offset.
 */
type WireChange = readonly unknown[];

const NO_ORIGIN = -1;
const ROW_VALUES_AT = 12;

class ShapeTable {
  readonly list: string[][] = [];
  readonly #byKey = new Map<string, number>();
  /** Last shape per table: consecutive rows of a table nearly always share it (no key string built). */
  readonly #last = new Map<string, number>();

  indexOf(row: Row, hint: string): number {
    const last = this.#last.get(hint);
    if (last !== undefined && sameKeys(row, this.list[last] as string[])) return last;
    const names = Object.keys(row);
    const key = names.join('\u0000');
    let index = this.#byKey.get(key);
    if (index === undefined) {
      index = this.list.length;
      this.list.push(names);
      this.#byKey.set(key, index);
    }
    this.#last.set(hint, index);
    return index;
  }
}

function sameKeys(row: Row, names: readonly string[]): boolean {
  let i = 0;
  for (const name in row) {
    if (names[i] !== name) return false;
    i++;
  }
  return i === names.length;
}

export function toWire(changes: readonly Change[]): WireBatch {
  const keyShapes = new ShapeTable();
  const rowShapes = new ShapeTable();
  const topics: string[] = [];
  const topicIndex = new Map<string, number>();
  const out: WireChange[] = new Array(changes.length);

  for (let c = 0; c < changes.length; c++) {
    const change = changes[c] as Change;
    const origin = change.origin;
    let topic = NO_ORIGIN;
    if (origin) {
      topic = topicIndex.get(origin.topic) ?? -1;
      if (topic === -1) {
        topic = topics.length;
        topics.push(origin.topic);
        topicIndex.set(origin.topic, topic);
      }
    }
    const head: unknown[] = [
      change.kind === 'upsert' ? UPSERT : change.kind === 'delete' ? DELETE : TRUNCATE,
      change.table,
      change.position.lsn,
      change.position.tsMs,
      topic,
      origin?.partition ?? 0,
      origin?.offset ?? '',
    ];
    if (change.kind === 'truncate') {
      out[c] = head;
      continue;
    }
    const keyShape = keyShapes.indexOf(change.key, change.table);
    head.push(
      change.kind === 'upsert' ? change.op : '',
      change.kind === 'upsert' && change.unavailable.length > 0 ? change.unavailable : 0,
      keyShape,
      Object.values(change.key),
    );
    if (change.kind === 'upsert') {
      head.push(rowShapes.indexOf(change.row, change.table));
      for (const name in change.row) head.push(change.row[name]);
    }
    out[c] = head;
  }
  return { keyShapes: keyShapes.list, rowShapes: rowShapes.list, topics, changes: out };
}

const NONE: readonly string[] = [];

function rowOf(names: readonly string[], values: readonly unknown[], from: number): Row {
  const row: Record<string, ColumnValue> = {};
  for (let i = 0; i < names.length; i++) row[names[i] as string] = values[from + i] as ColumnValue;
  return row;
}

export function fromWire(batch: WireBatch): Change[] {
  const { keyShapes, rowShapes, topics } = batch;
  const out: Change[] = new Array(batch.changes.length);
  for (let c = 0; c < batch.changes.length; c++) {
    const w = batch.changes[c] as WireChange;
    const table = w[1] as SourceTable;
    const position = { lsn: w[2] as number, tsMs: w[3] as number };
    const topic = w[4] as number;
    const origin: MessageOrigin | undefined =
      topic === NO_ORIGIN
        ? undefined
        : { topic: topics[topic] as string, partition: w[5] as number, offset: w[6] as string };
    const withOrigin = origin ? { origin } : {};
    if (w[0] === TRUNCATE) {
      out[c] = { kind: 'truncate', table, position, ...withOrigin };
      continue;
    }
    const key = rowOf(keyShapes[w[9] as number] as string[], w[10] as unknown[], 0);
    if (w[0] === DELETE) {
      out[c] = { kind: 'delete', table, key, position, ...withOrigin };
      continue;
    }
    out[c] = {
      kind: 'upsert',
      op: w[7] as 'c' | 'u' | 'r',
      table,
      key,
      row: rowOf(rowShapes[w[11] as number] as string[], w, ROW_VALUES_AT),
      unavailable: w[8] === 0 ? NONE : (w[8] as string[]),
      position,
      ...withOrigin,
    };
  }
  return out;
}
