import type { ClientBase } from 'pg';

/** Runs `work` in one transaction: a key and its grants reach Debezium as one commit. */
export async function withTransaction<T>(client: ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
