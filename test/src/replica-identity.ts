// What PostgreSQL says about tables' replica identity: which index a table's deletes and updates
// carry in their before image (dev-world/db/partitioned-identity.sql gives each tenant table its
// (company_id, id) index when the topics are partitioned by company).
import type pg from 'pg';

export interface ReplicaIdentity {
  /** pg_class.relreplident: `d` default (primary key), `i` an index, `f` full, `n` nothing. */
  readonly kind: string;
  /** The index of a `REPLICA IDENTITY USING INDEX`, else null. */
  readonly index: string | null;
}

/** The replica identity of each of `tables` in schema public, by table name, in name order. */
export async function replicaIdentities(
  pool: Pick<pg.Pool, 'query'>,
  tables: readonly string[],
): Promise<Map<string, ReplicaIdentity>> {
  const { rows } = await pool.query<{ relname: string; relreplident: string; index: string | null }>(
    `SELECT c.relname, c.relreplident, (SELECT i.indexrelid::regclass::text FROM pg_index i
       WHERE i.indrelid = c.oid AND i.indisreplident) AS index
     FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1) ORDER BY 1`,
    [[...tables]],
  );
  return new Map(rows.map((r) => [r.relname, { kind: r.relreplident, index: r.index }]));
}
