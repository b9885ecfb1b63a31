// @pda/dev-world/stack: what tests and benchmarks need of the native stack — its addresses (the
// env file `stack.sh up` writes, read by @pda/operator-tools/local-stack) and the connector's
// partitioned overlay (connector-config.ts).
export * from '@pda/operator-tools/local-stack';
export { dataPartitions, partitionedConnectorOverlay } from './connector-config.ts';
