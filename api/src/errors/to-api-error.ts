import { classifyFault, ProjectionError } from '@pda/projections/model';
import { ApiError, rateLimitExceeded } from './api-error.ts';
import { validationError } from './validation-error.ts';

/**
 * Every error that reaches the error handler becomes one of the catalogued codes. `log` says how
 * loud: client mistakes are not logged as errors; our own failures are, with the stack (logs only —
 * a problem document never carries internals).
 */

export interface MappedError {
  readonly apiError: ApiError;
  readonly log: 'error' | 'warn' | undefined;
}

interface FrameworkError {
  statusCode?: number;
  code?: string;
  validation?: unknown[];
  validationContext?: string;
}

export function toApiError(error: unknown): MappedError {
  if (error instanceof ApiError) {
    return { apiError: error, log: error.status >= 500 ? 'error' : undefined };
  }
  if (error instanceof ProjectionError && error.code === 'company_file_damaged') {
    // Out of service until ingest rebuilds it: logged once per company (plugins/projections.ts).
    return {
      apiError: new ApiError('service_unavailable', "This company's data is being rebuilt; retry shortly."),
      log: undefined,
    };
  }
  if (classifyFault(error) !== undefined) {
    // SQLite met a damaged file or an I/O error while reading (the open succeeded): never a 500,
    // the handle is closed by the error handler (a rebuilt file is opened again).
    return {
      apiError: new ApiError('service_unavailable', 'The data is temporarily unavailable; retry shortly.'),
      log: 'error',
    };
  }
  if (error instanceof ProjectionError) {
    // Missing, older or newer than this build understands (a rebuild in progress, or an ingest
    // upgrade ahead of the api), unreadable, or no descriptor left to open it: never a wrong
    // answer, a retriable 503. Logged as an error where an operator must act.
    const operatorMustAct = error.code === 'projection_too_new' || error.code === 'projection_unreadable';
    return {
      apiError: new ApiError('service_unavailable', 'The data is temporarily unavailable; retry shortly.'),
      log: operatorMustAct ? 'error' : 'warn',
    };
  }
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkError;
  if (Array.isArray(framework.validation)) {
    return {
      apiError: validationError(
        framework.validation as Parameters<typeof validationError>[0],
        framework.validationContext,
      ),
      log: undefined,
    };
  }
  const status = framework.statusCode;
  // The limiter's 429 arrives as an ApiError (plugins/rate-limit.ts, errorResponseBuilder); this
  // covers a 429 the library would throw itself, with the Retry-After it has set on the reply.
  if (status === 429) return { apiError: rateLimitExceeded(), log: undefined };
  if (status === 503) {
    return {
      apiError: new ApiError('service_unavailable', 'The service is overloaded; retry shortly.'),
      log: 'warn',
    };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    // Fastify's own client errors (bad URL, body on a GET, unsupported media type ...).
    return { apiError: new ApiError('bad_request', 'The request is malformed.'), log: undefined };
  }
  return { apiError: new ApiError('internal_error', 'An unexpected error occurred.'), log: 'error' };
}
