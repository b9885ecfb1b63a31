// Lists API keys without ever exposing a key: only the identifier (svc_pk_…abcd) is shown.
import type { ClientBase } from 'pg';
import { keyIdentifier } from './key-material.ts';
import { checkUuid } from './validate.ts';

export type KeyStatus = 'active' | 'rotating' | 'revoked' | 'expired';

export interface ListedApiKey {
  id: string;
  name: string;
  identifier: string;
  scopes: string[];
  companyIds: string[];
  expiresAt: Date | null;
  revokesAt: Date | null;
  createdAt: Date;
  status: KeyStatus;
}

interface Row {
  id: string;
  name: string;
  prefix: string;
  last_four: string;
  scopes: string[];
  company_ids: string[] | null;
  expires_at: Date | null;
  revokes_at: Date | null;
  created_at: Date;
}

export function keyStatus(key: { expiresAt: Date | null; revokesAt: Date | null }, now: Date): KeyStatus {
  if (key.revokesAt && key.revokesAt <= now) return 'revoked';
  if (key.expiresAt && key.expiresAt <= now) return 'expired';
  return key.revokesAt ? 'rotating' : 'active';
}

export async function listApiKeys(
  client: ClientBase,
  options: { companyId?: string; now?: Date } = {},
): Promise<ListedApiKey[]> {
  const companyId = options.companyId === undefined ? null : checkUuid('company id', options.companyId);
  const now = options.now ?? new Date();
  const { rows } = await client.query<Row>(
    `SELECT k.id, k.name, k.prefix, k.last_four, k.scopes, k.expires_at, k.revokes_at, k.created_at,
            array_agg(g.company_id::text ORDER BY g.company_id) FILTER (WHERE g.company_id IS NOT NULL) AS company_ids
       FROM api_keys k LEFT JOIN api_key_companies g ON g.api_key_id = k.id
      WHERE $1::uuid IS NULL
         OR EXISTS (SELECT 1 FROM api_key_companies f WHERE f.api_key_id = k.id AND f.company_id = $1::uuid)
      GROUP BY k.id
      ORDER BY k.created_at, k.id`,
    [companyId],
  );
  return rows.map((r) => {
    const dates = { expiresAt: r.expires_at, revokesAt: r.revokes_at };
    return {
      id: r.id,
      name: r.name,
      identifier: keyIdentifier(r.prefix, r.last_four),
      scopes: r.scopes,
      companyIds: r.company_ids ?? [],
      ...dates,
      createdAt: r.created_at,
      status: keyStatus(dates, now),
    };
  });
}
