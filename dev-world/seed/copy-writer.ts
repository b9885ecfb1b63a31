// Streams generated rows into PostgreSQL with COPY FROM STDIN, one COPY per batch of one table.
//
// Why COPY (pg-copy-streams, by the maintainers' ecosystem of `pg`): it is PostgreSQL's bulk path,
// several times faster than multi-row INSERTs and without their 65,535-parameter cap, which is what
// lets the seed reach millions of rows in minutes. Batches bound the memory of one COPY; the
// transaction is the caller's (seedDatabase loads everything in one, so a failure leaves nothing).
import { once } from 'node:events';
import type { ClientBase } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyLine } from './copy-text.ts';
import { SEED_COLUMNS, type SeedRow, type SeedTable } from './rows.ts';

export interface Batch {
  table: SeedTable;
  rows: number;
  text: string;
}

export interface WriteOptions {
  batchSize: number;
  /** called after each batch PostgreSQL accepted (progress reporting) */
  onBatch?: (table: SeedTable, rows: number) => void;
}

async function copyBatch(client: ClientBase, batch: Batch): Promise<void> {
  const columns = SEED_COLUMNS[batch.table].map((c) => `"${String(c)}"`).join(', ');
  const stream = client.query(copyFrom(`COPY "${batch.table}" (${columns}) FROM STDIN`));
  const done = Promise.race([once(stream, 'finish'), once(stream, 'error').then(([e]) => Promise.reject(e))]);
  stream.end(batch.text);
  await done;
}

/** Groups consecutive rows of a table into batches of at most `batchSize` rows. */
export function* batchRows(rows: Iterable<SeedRow>, batchSize: number): Generator<Batch> {
  let current: { table: SeedTable; lines: string[] } | undefined;
  for (const { table, row } of rows) {
    if (current && (current.table !== table || current.lines.length >= batchSize)) {
      yield { table: current.table, rows: current.lines.length, text: current.lines.join('') };
      current = undefined;
    }
    current ??= { table, lines: [] };
    current.lines.push(copyLine(row, SEED_COLUMNS[table] as readonly (keyof typeof row)[]));
  }
  if (current) yield { table: current.table, rows: current.lines.length, text: current.lines.join('') };
}

/**
 * Writes the rows in order. The next batch is generated while the previous one is on the wire,
 * but a batch is sent only after the one before it finished, which keeps foreign keys satisfied.
 * Run it inside a transaction to make the whole stream all-or-nothing.
 */
export async function writeSeedRows(
  client: ClientBase,
  rows: Iterable<SeedRow>,
  options: WriteOptions,
): Promise<number> {
  let written = 0;
  let pending: Promise<void> | undefined;
  try {
    for (const batch of batchRows(rows, options.batchSize)) {
      if (pending) await pending;
      pending = copyBatch(client, batch).then(() => {
        written += batch.rows;
        options.onBatch?.(batch.table, batch.rows);
      });
    }
  } catch (error) {
    // The row stream threw while a COPY was on the wire: let it end before the caller rolls back
    // on the same connection (and so its own failure is not left unhandled).
    await pending?.catch(() => undefined);
    throw error;
  }
  if (pending) await pending;
  return written;
}
