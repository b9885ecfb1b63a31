import { type ApiKeyRecord, type CompanyRecord, readApiKeyByHash, readCompany } from './control.ts';
import type { ReadHandle } from './read-handle.ts';

/**
 * The key and company lookups of every authenticated request, memoised per control handle and
 * valid for exactly one state of control.sqlite: `PRAGMA data_version` (one step of a cached
 * statement) changes whenever another connection — ingest — commits to the file, and any commit
 * empties the memo. It is read at most once per event-loop turn (each read is a statement step on
 * every request's path, data_version in bench/README.md, "Where a list request's CPU goes"; a
 * request's key and company lookups run in different hooks of the same turn), so a new, revoked, re-scoped or
 * re-granted key is seen by every request that starts after the turn in which ingest committed it. Expiry and the end
 * of a rotation grace period are still decided per request from the record's timestamps
 * (api/src/auth/authorize.ts); the memo only saves the two or three statements that read them.
 *
 * A handle reopened after a swap is a new handle and gets a new memo (WeakMap). Unknown hashes are
 * not memoised (a guesser must not evict real keys); the maps are bounded all the same.
 */

const MAX_ENTRIES = 10_000;

interface Memo {
  version: number;
  readonly keys: Map<string, ApiKeyRecord>;
  readonly companies: Map<string, CompanyRecord>;
}

const memos = new WeakMap<ReadHandle, Memo>();

/** readApiKeyByHash, served from the memo while control.sqlite is unchanged. */
export function readApiKeyByHashMemo(handle: ReadHandle, keySha256: string): ApiKeyRecord | undefined {
  const memo = current(handle);
  const cached = memo.keys.get(keySha256);
  if (cached) return cached;
  const key = readApiKeyByHash(handle, keySha256);
  if (key) remember(memo.keys, keySha256, freezeKey(key));
  return key;
}

/** readCompany, served from the memo while control.sqlite is unchanged. */
export function readCompanyMemo(handle: ReadHandle, companyId: string): CompanyRecord | undefined {
  const memo = current(handle);
  const cached = memo.companies.get(companyId);
  if (cached) return cached;
  const company = readCompany(handle, companyId);
  if (company) remember(memo.companies, companyId, Object.freeze(company));
  return company;
}

/** Handles whose data_version was read in this event-loop turn (cleared by setImmediate). */
const checkedThisTurn = new Set<ReadHandle>();

function current(handle: ReadHandle): Memo {
  let memo = memos.get(handle);
  if (memo && checkedThisTurn.has(handle)) return memo;
  if (checkedThisTurn.size === 0) setImmediate(() => checkedThisTurn.clear());
  checkedThisTurn.add(handle);
  const [version] = handle.statement('data-version', () => 'PRAGMA data_version', { raw: true }).get() as [
    number,
  ];
  if (!memo) {
    memo = { version, keys: new Map(), companies: new Map() };
    memos.set(handle, memo);
  } else if (memo.version !== version) {
    memo.version = version;
    memo.keys.clear();
    memo.companies.clear();
  }
  return memo;
}

function remember<V>(map: Map<string, V>, id: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.clear();
  map.set(id, value);
}

/** Records are shared by concurrent requests: nothing may change them. */
function freezeKey(key: ApiKeyRecord): ApiKeyRecord {
  Object.freeze(key.scopes);
  Object.freeze(key.companyIds);
  return Object.freeze(key);
}
