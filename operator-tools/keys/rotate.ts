// Rotates an API key: issues a replacement with the same name, companies and scopes, and lets the
// old key keep working for a grace period (revokes_at = now + grace) so clients can switch over.
import type { ClientBase } from 'pg';
import { withTransaction } from '../pg/transaction.ts';
import { type IssuedApiKey, insertApiKey } from './issue.ts';
import { KeyConflict, KeyNotFound } from './key-errors.ts';
import { checkUuid } from './validate.ts';

export const DEFAULT_GRACE_MS = 7 * 86_400_000;

export interface RotateRequest {
  id: string;
  graceMs?: number;
  /** the replacement's expiry; by default the old key's */
  expiresAt?: Date | null;
  now?: Date;
}

export interface RotateResult {
  replacement: IssuedApiKey;
  oldId: string;
  oldRevokesAt: Date;
}

interface OldKey {
  name: string;
  scopes: string[];
  expires_at: Date | null;
  revokes_at: Date | null;
  company_ids: string[] | null;
}

export async function rotateApiKey(client: ClientBase, request: RotateRequest): Promise<RotateResult> {
  const id = checkUuid('key id', request.id);
  const now = request.now ?? new Date();
  const graceMs = request.graceMs ?? DEFAULT_GRACE_MS;
  return withTransaction(client, async () => {
    // FOR UPDATE: two concurrent rotations of one key must not both issue a replacement.
    const { rows } = await client.query<OldKey>(
      `SELECT k.name, k.scopes, k.expires_at, k.revokes_at,
              (SELECT array_agg(g.company_id::text ORDER BY g.company_id)
                 FROM api_key_companies g WHERE g.api_key_id = k.id) AS company_ids
         FROM api_keys k WHERE k.id = $1 FOR UPDATE`,
      [id],
    );
    const old = rows[0];
    if (!old) throw new KeyNotFound(id);
    if (old.revokes_at && old.revokes_at <= now) {
      throw new KeyConflict(`API key ${id} is already revoked; issue a new key instead`);
    }
    const expiresAt = request.expiresAt === undefined ? old.expires_at : request.expiresAt;
    if (expiresAt && expiresAt <= now) {
      throw new KeyConflict(`the replacement of ${id} would already be expired; pass --expires-at`);
    }
    if (!old.company_ids || old.company_ids.length === 0) {
      throw new KeyConflict(`API key ${id} has no company left to grant`);
    }
    const replacement = await insertApiKey(client, {
      companyIds: old.company_ids,
      name: old.name,
      scopes: old.scopes,
      expiresAt,
    });
    const graceEnd = new Date(now.getTime() + graceMs);
    const { rows: updated } = await client.query<{ revokes_at: Date }>(
      `UPDATE api_keys SET revokes_at = LEAST(COALESCE(revokes_at, $2::timestamptz), $2::timestamptz)
       WHERE id = $1 RETURNING revokes_at`,
      [id, graceEnd.toISOString()],
    );
    return { replacement, oldId: id, oldRevokesAt: updated[0]?.revokes_at ?? graceEnd };
  });
}
