// Revokes an API key at a given time (default now). A revocation is never moved later: revoking
// a key that already stops working earlier keeps the earlier time.
import type { ClientBase } from 'pg';
import { KeyNotFound } from './key-errors.ts';
import { checkUuid } from './validate.ts';

export interface RevokeRequest {
  id: string;
  at?: Date;
}

export interface RevokeResult {
  id: string;
  revokesAt: Date;
}

export async function revokeApiKey(client: ClientBase, request: RevokeRequest): Promise<RevokeResult> {
  const id = checkUuid('key id', request.id);
  const at = request.at ?? new Date();
  const { rows } = await client.query<{ id: string; revokes_at: Date }>(
    `UPDATE api_keys SET revokes_at = LEAST(COALESCE(revokes_at, $2::timestamptz), $2::timestamptz)
     WHERE id = $1 RETURNING id, revokes_at`,
    [id, at.toISOString()],
  );
  const row = rows[0];
  if (!row) throw new KeyNotFound(id);
  return { id: row.id, revokesAt: row.revokes_at };
}
