import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { safeAttributes } from './safe-attributes.ts';

/**
 * An exporter that sends every span through safeAttributes first (its attributes, its events' and
 * its links' attributes): the one place between the deployable and the collector, so that no
 * attribute set anywhere (ours, @fastify/otel's) can carry a key, a cursor or a token out.
 */
export class SafeSpanExporter implements SpanExporter {
  readonly #inner: SpanExporter;

  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(spans.map(safeSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

function safeSpan(span: ReadableSpan): ReadableSpan {
  // A view with the cleaned attributes; the rest of the span (its context, times) read through.
  return Object.create(span, {
    attributes: { value: safeAttributes(span.attributes), enumerable: true },
    events: {
      value: span.events.map((e) => ({
        ...e,
        ...(e.attributes && { attributes: safeAttributes(e.attributes) }),
      })),
      enumerable: true,
    },
    links: {
      value: span.links.map((l) => ({
        ...l,
        ...(l.attributes && { attributes: safeAttributes(l.attributes) }),
      })),
      enumerable: true,
    },
  }) as ReadableSpan;
}
