import { type ApiError, ERROR_CODES, type ErrorCode } from './api-error.ts';

/** RFC 9457 problem documents; `type` is the documentation URI of the code (api/README.md#errors). */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';
const TYPE_BASE = 'https://developer.example.com/public-data-api/errors/';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  errors?: { parameter: string; detail: string }[];
}

export function problemDocument(error: ApiError, requestId: string): ProblemDocument {
  const { status, title } = ERROR_CODES[error.code];
  const document: ProblemDocument = {
    type: `${TYPE_BASE}${error.code}`,
    title,
    status,
    detail: error.message.slice(0, 2_000),
    code: error.code,
    request_id: requestId,
  };
  if (error.errors && error.errors.length > 0) {
    document.errors = error.errors.slice(0, 50).map((entry) => ({
      parameter: entry.parameter.slice(0, 200),
      detail: entry.detail.slice(0, 1_000),
    }));
  }
  return document;
}
