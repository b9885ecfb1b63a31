// Issues an API key: stores its hash, prefix, last four, scopes and company grants in one
// transaction and returns the key, which the caller shows once and then forgets.
import type { ClientBase } from 'pg';
import { withTransaction } from '../pg/transaction.ts';
import { KeyConflict } from './key-errors.ts';
import { keyIdentifier, newKeyMaterial } from './key-material.ts';
import type { Scope } from './scopes.ts';
import { checkCompanyIds, checkName, checkScopes } from './validate.ts';

export interface IssueRequest {
  companyIds: readonly string[];
  name: string;
  scopes: readonly string[];
  expiresAt?: Date | null;
}

export interface IssuedApiKey {
  id: string;
  /** the secret: show once, never store, never log */
  key: string;
  identifier: string;
  name: string;
  scopes: Scope[];
  companyIds: string[];
  expiresAt: Date | null;
}

/** Inserts the key and its grants; the caller owns the transaction. */
export async function insertApiKey(client: ClientBase, request: IssueRequest): Promise<IssuedApiKey> {
  const companyIds = checkCompanyIds(request.companyIds);
  const name = checkName(request.name);
  const scopes = checkScopes(request.scopes);
  const expiresAt = request.expiresAt ?? null;

  const { rows: found } = await client.query<{ id: string }>(
    'SELECT id FROM companies WHERE id = ANY($1::uuid[])',
    [companyIds],
  );
  const known = new Set(found.map((r) => r.id));
  const missing = companyIds.filter((id) => !known.has(id));
  if (missing.length > 0) throw new KeyConflict(`unknown company ${missing.join(', ')}`);

  const material = newKeyMaterial();
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO api_keys (name, prefix, last_four, key_sha256, scopes, expires_at)
     VALUES ($1, $2, $3, $4, $5::text[], $6) RETURNING id`,
    [name, material.prefix, material.lastFour, material.sha256, scopes, expiresAt?.toISOString() ?? null],
  );
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('INSERT … RETURNING gave no id');
  await client.query('INSERT INTO api_key_companies (api_key_id, company_id) SELECT $1, unnest($2::uuid[])', [
    id,
    companyIds,
  ]);
  return {
    id,
    key: material.key,
    identifier: keyIdentifier(material.prefix, material.lastFour),
    name,
    scopes,
    companyIds,
    expiresAt,
  };
}

export async function issueApiKey(client: ClientBase, request: IssueRequest): Promise<IssuedApiKey> {
  return withTransaction(client, () => insertApiKey(client, request));
}
