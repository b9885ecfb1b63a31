/**
 * What a request's span says about the answer (docs/operations.md, "Traces"): the company, the page
 * plan chosen and the rows read, and for a change-feed page or stream chunk a link to each traced
 * ingest batch that applied what it served — a change's journey from the source commit to the
 * partner is then one lookup in the collector. The span is @fastify/otel's request span
 * (observability/tracing.ts); without traces there is none and every call here is a no-op.
 */
import type { Span } from '@opentelemetry/api';
import type { TraceLink } from '@pda/projections/model';
import type { FastifyRequest } from 'fastify';

/** Links per span at most (the SDK's own default bound): a live stream serves many batches. */
const MAX_LINKS = 128;
const SAMPLED = 1;

interface OtelRequest {
  opentelemetry?: () => { readonly span?: Span | null };
}

/** The request's span when it is being recorded (sampled), else undefined. */
export function recordingSpan(request: FastifyRequest): Span | undefined {
  const span = (request as FastifyRequest & OtelRequest).opentelemetry?.().span ?? undefined;
  return span?.isRecording() ? span : undefined;
}

/** A list page: which plan read it and how many rows it has. */
export function noteListPage(
  span: Span | undefined,
  page: { plan?: string | undefined; count: number },
): void {
  if (!span) return;
  span.setAttributes({ 'pda.page.plan': page.plan ?? 'walk', 'pda.rows_read': page.count });
}

/** Per span: rows served so far and the batches linked (a stream notes each chunk). */
const served = new WeakMap<Span, { rows: number; readonly linked: Set<string> }>();

/** A change-feed page or stream chunk: its rows, and a link to each traced batch that wrote them. */
export function noteFeedRead(
  span: Span | undefined,
  read: { readonly count: number; readonly appliedIn?: readonly TraceLink[] | undefined },
): void {
  if (!span) return;
  const state = served.get(span) ?? { rows: 0, linked: new Set<string>() };
  served.set(span, state);
  state.rows += read.count;
  span.setAttribute('pda.rows_read', state.rows);
  for (const link of read.appliedIn ?? []) {
    if (state.linked.size >= MAX_LINKS || state.linked.has(link.spanId)) continue;
    state.linked.add(link.spanId);
    span.addLink({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: SAMPLED },
      attributes: { 'pda.link': 'applied_by' },
    });
  }
}
