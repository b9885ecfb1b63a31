import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { REDACTED, redactUrl } from '@pda/projections/model';

/**
 * No API key, cursor or sync token in a span (docs/operations.md, "Traces"): spans leave the
 * deployable for a collector that more people read than the api's own logs. Applied to every span
 * before export (SafeSpanExporter), whoever set the attribute — our code or a library's:
 * - an attribute whose name speaks of a secret or a position (`*key*`, `*token*`, `*cursor*`,
 *   `authorization`, `cookie`, `password`, `secret`) or is a query string (`url.query`) is dropped;
 * - URL attributes (`url.*`, `http.url`, `http.target`) keep their path only (redacted as the
 *   request log redacts it): a query string carries cursors, sync tokens and filters;
 * - any other string that contains an API key (`svc_pk_…`) becomes `[REDACTED]`.
 * Our own attributes are named under `pda.` and never carry such values; this is the net below.
 */

const SECRET_NAME = /(key|token|cursor|authorization|cookie|password|secret|query)/i;
const URL_NAME = /^(url\.|http\.url$|http\.target$)/;
const KEY_PREFIX = /svc(_|%5f|%255f)pk(_|%5f|%255f)/i;

export function safeAttributes(attributes: Attributes): Attributes {
  const safe: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || SECRET_NAME.test(name)) continue;
    safe[name] = URL_NAME.test(name) && typeof value === 'string' ? pathOnly(value) : safeValue(value);
  }
  return safe;
}

function pathOnly(url: string): string {
  const queryAt = url.indexOf('?');
  return redactUrl(queryAt === -1 ? url : url.slice(0, queryAt));
}

function safeValue(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return KEY_PREFIX.test(value) ? REDACTED : value;
  if (Array.isArray(value) && value.some((v) => typeof v === 'string' && KEY_PREFIX.test(v)))
    return (value as readonly unknown[]).map((v) =>
      typeof v === 'string' && KEY_PREFIX.test(v) ? REDACTED : v,
    ) as AttributeValue;
  return value;
}
