import { ApiError, CURSOR_DETAIL, type ParameterError } from './api-error.ts';

/**
 * Maps a Fastify schema-validation failure (Ajv errors on the querystring, params or headers taken
 * from the contract) to 400 invalid_parameter naming each offending parameter — or to
 * invalid_cursor when the cursor is the only offender: a cursor the api cannot use is
 * `invalid_cursor` whatever the reason (api/README.md, "Errors"), so a client restarts its walk.
 */

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const CURSOR = 'cursor';
const HEADER_NAMES: Readonly<Record<string, string>> = { 'x-service-company': 'X-Service-Company' };

export function validationError(validation: readonly AjvError[], context: string | undefined): ApiError {
  const errors = validation.map((entry) => parameterError(entry, context));
  const names = [...new Set(errors.map((entry) => entry.parameter))];
  if (names.length === 1 && names[0] === CURSOR) {
    return new ApiError('invalid_cursor', CURSOR_DETAIL, { errors });
  }
  return new ApiError('invalid_parameter', `Invalid parameter: ${names.join(', ')}.`, { errors });
}

function parameterError(entry: AjvError, context: string | undefined): ParameterError {
  const params = entry.params ?? {};
  if (entry.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return {
      parameter: params.additionalProperty,
      detail: context === 'querystring' ? 'unknown query parameter' : 'unknown parameter',
    };
  }
  let name =
    typeof params.missingProperty === 'string' ? params.missingProperty : pointerHead(entry.instancePath);
  if (context === 'headers') name = HEADER_NAMES[name] ?? name;
  return { parameter: name || context || 'request', detail: detail(entry) };
}

function detail(entry: AjvError): string {
  if (entry.keyword === 'type' && entry.params?.type === 'integer') return 'must be an integer';
  if (entry.keyword === 'format' && entry.params?.format === 'int32')
    return 'must be an integer in the 32-bit range';
  if (entry.keyword === 'format' && entry.params?.format === 'date-time') {
    return 'must be an RFC 3339 date-time with a time zone, e.g. 2026-01-31T12:00:00Z';
  }
  return entry.message ?? 'is invalid';
}

/** '/fields[sites]' → 'fields[sites]' (JSON pointer of the first level, unescaped). */
function pointerHead(pointer: string | undefined): string {
  if (!pointer) return '';
  const head = pointer.split('/')[1] ?? '';
  return head.replaceAll('~1', '/').replaceAll('~0', '~');
}
