// Errors of the key functions. The CLI maps InvalidKeyRequest to exit 2 (the caller's input was
// wrong) and the others to exit 1.

/** The request itself is malformed: unknown scope, empty name, bad uuid, bad date. */
export class InvalidKeyRequest extends Error {}

/** No API key with that id. */
export class KeyNotFound extends Error {
  constructor(id: string) {
    super(`no API key with id ${id}`);
  }
}

/** The request is well-formed but the data does not allow it (unknown company, revoked key). */
export class KeyConflict extends Error {}
