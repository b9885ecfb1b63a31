import type { Problem, ProblemCode } from './contract.ts';

/**
 * An error answer the client did not retry, or kept getting until its attempts ran out: carries the
 * problem document (docs/public-data-api-v1.md, "Errors"; api/README.md lists every code). Switch
 * on `code`; quote `requestId` to support.
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  readonly status: number;
  /** The problem's `code`; undefined when the body was not a problem document (a proxy's page). */
  readonly code: ProblemCode | undefined;
  readonly detail: string | undefined;
  /** The problem's `request_id`, else the `X-Request-Id` header. */
  readonly requestId: string | undefined;
  readonly problem: Problem | undefined;
  /** The URL requested (it never carries the key: the key travels in the Authorization header). */
  readonly url: string;

  constructor(status: number, problem: Problem | undefined, url: string, requestId?: string) {
    const id = problem?.request_id ?? requestId;
    super(
      `${status} ${problem?.code ?? 'unexpected answer'}${problem?.detail ? `: ${problem.detail}` : ''}` +
        `${id ? ` (request ${id})` : ''}`,
    );
    this.status = status;
    this.code = problem?.code;
    this.detail = problem?.detail;
    this.requestId = id;
    this.problem = problem;
    this.url = url;
  }
}

/**
 * `410 sync_window_expired` from `GET /v1/deletions`: the `since` time is older than the deletions
 * the company still keeps (at least 35 days; less right after the service rebuilt its projections),
 * so an incremental run could miss deletes. Run a full export (`exportAll`), replace the local copy
 * with it, and sync from that export's start time.
 */
export class SyncWindowExpiredError extends ApiError {
  override readonly name = 'SyncWindowExpiredError';
}

/** The error for an answer of `status` whose body parsed as `body` (anything, or nothing). */
export function apiError(status: number, body: unknown, url: string, requestId?: string): ApiError {
  const problem = isProblem(body) ? body : undefined;
  if (status === 410 && problem?.code === 'sync_window_expired') {
    return new SyncWindowExpiredError(status, problem, url, requestId);
  }
  return new ApiError(status, problem, url, requestId);
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { code?: unknown }).code === 'string' &&
    typeof (body as { status?: unknown }).status === 'number'
  );
}

/**
 * The api answered a request for a stream with something else (a `200` of another media type: an
 * api, or a proxy in front of it, that sends the change feed as pages only). `client.follow` reads
 * the same feed page by page; `exportAll` falls back to pages by itself.
 */
export class StreamNotOfferedError extends Error {
  override readonly name = 'StreamNotOfferedError';
  readonly url: string;
  readonly contentType: string | null;

  constructor(url: string, contentType: string | null) {
    super(`${url} answered ${contentType ?? 'without a content type'}, not a stream`);
    this.url = url;
    this.contentType = contentType;
  }
}
