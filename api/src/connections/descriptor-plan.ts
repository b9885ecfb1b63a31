/**
 * How the api process spends its open-file limit (docs/operations.md#sizing-a-node): a reserve for
 * client connections and its own descriptors, the rest for company files (plugins/projections.ts).
 * Client connections are capped too (server.ts sets `maxConnections`), so a flood of connections
 * cannot take the descriptors that Node itself needs: out of descriptors, even reading the process's
 * memory fails (EMFILE in process.memoryUsage(), which the load shedding samples every second).
 */
import { descriptorReserve } from '@pda/projections/model';

/** Descriptors kept for everything but company files: connections, control.sqlite, Node's own. */
export const API_DESCRIPTOR_RESERVE = 2048;
/**
 * Node's own (stdio, epoll, signals, threads' pipes), control.sqlite, the admin port, Redis, logs:
 * ~30 measured in a running api (tests/low-descriptor-limit.test.ts), with some room.
 */
const INTERNAL = 40;

export interface DescriptorPlan {
  /** The process's open-file limit (undefined: could not be read, 1,024 assumed). */
  readonly limit: number | undefined;
  /** Descriptors kept out of the company-file budget (at most half the limit). */
  readonly reserve: number;
  /** Client connections the public server accepts at once (more are closed on arrival). */
  readonly maxConnections: number;
}

export function descriptorPlan(limit: number | undefined): DescriptorPlan {
  const reserve = descriptorReserve(limit, API_DESCRIPTOR_RESERVE);
  return { limit, reserve, maxConnections: Math.max(1, reserve - INTERNAL) };
}
