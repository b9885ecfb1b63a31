// `@pda/tracing`: OpenTelemetry traces of both deployables (docs/operations.md, "Traces").
export * from './safe-attributes.ts';
export * from './safe-exporter.ts';
export * from './sampler.ts';
export * from './settings.ts';
export * from './start-tracing.ts';
