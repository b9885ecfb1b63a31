// @pda/operator-tools/keys: the API-key functions behind the keys CLI, and the scope vocabulary (also alone, without
// pg, as @pda/operator-tools/scopes).

export type { IssuedApiKey, IssueRequest } from './issue.ts';
export { issueApiKey } from './issue.ts';
export { InvalidKeyRequest, KeyConflict, KeyNotFound } from './key-errors.ts';
export type { KeyMaterial } from './key-material.ts';
export { hashApiKey, KEY_PREFIX, keyIdentifier, newKeyMaterial } from './key-material.ts';
export type { KeyStatus, ListedApiKey } from './list.ts';
export { keyStatus, listApiKeys } from './list.ts';
export type { RevokeRequest, RevokeResult } from './revoke.ts';
export { revokeApiKey } from './revoke.ts';
export type { RotateRequest, RotateResult } from './rotate.ts';
export { DEFAULT_GRACE_MS, rotateApiKey } from './rotate.ts';
export type { Scope, ScopeEntry } from './scopes.ts';
export { isScope, SCOPE_NAMES, SCOPES } from './scopes.ts';
export { parseDuration, parseInstant } from './validate.ts';
