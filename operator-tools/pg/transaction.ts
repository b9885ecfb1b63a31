import type { ClientBase } from 'pg';

/** Runs `work` in one transaction, rolled back when it throws (a key and its grants, a whole seed). */
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
