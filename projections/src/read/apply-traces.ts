import type { TraceLink } from '../model/trace-link.ts';
import type { ReadHandle } from './read-handle.ts';

/**
 * The traced ingest batches that wrote change times from `fromUs` to `toUs` of a company file
 * (migration company/007-apply-traces.sql), oldest first, at most `limit`: what the api's span of
 * a change-feed page links to. Empty when none of them was traced.
 */
export function readApplyTraces(
  handle: ReadHandle,
  fromUs: number,
  toUs: number,
  limit: number,
): readonly TraceLink[] {
  const rows = handle
    .statement(
      'apply-traces',
      () =>
        'SELECT trace_id, span_id FROM apply_traces WHERE last_changed_us >= ? AND first_changed_us <= ? ORDER BY last_changed_us LIMIT ?',
    )
    .all(fromUs, toUs, limit) as { trace_id: string; span_id: string }[];
  return rows.map((row) => ({ traceId: row.trace_id, spanId: row.span_id }));
}
