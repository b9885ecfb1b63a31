/**
 * The W3C ids of a span (lowercase hex: 32 digits of trace, 16 of span), as ingest leaves them in
 * a company file for the batch that applied its changes and the api reads them back to link its
 * span to that batch (migration company/007-apply-traces.sql; docs/operations.md, "Traces").
 */
export interface TraceLink {
  readonly traceId: string;
  readonly spanId: string;
}
