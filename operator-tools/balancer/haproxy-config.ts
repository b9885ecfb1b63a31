// The balancer's configuration for a set of api nodes, from operator-tools/balancer/haproxy.cfg.template
// (docs/deployment-replicas.md): {{NAME}} placeholders are replaced, a line with {{node.*}} is
// repeated per node, a line whose placeholders all render empty is left out.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export const HAPROXY_TEMPLATE = new URL('./haproxy.cfg.template', import.meta.url);

export interface BalancerNode {
  /** HAProxy's server name: letters, digits, `-`, `_`, `.` (shown in X-PDA-Node, logs and stats). */
  readonly name: string;
  /** The node's address (the api's API_HOST, ingest's INGEST_ADMIN_HOST). */
  readonly host: string;
}

/** The ports every node uses (one set for all: nodes differ by address). */
export interface NodePorts {
  /** API_PORT: partners' requests. */
  readonly apiPort: number;
  /** API_ADMIN_PORT: /healthz, the liveness check. */
  readonly apiAdminPort: number;
  /** INGEST_ADMIN_PORT: /readyz, the caught-up check. */
  readonly ingestAdminPort: number;
}

export interface BalancerOptions {
  /** Where partners connect, e.g. `0.0.0.0:8080` or `:::8080`. */
  readonly bind: string;
  /** The stats page (/stats), e.g. `127.0.0.1:8404`. */
  readonly statsBind: string;
  readonly nodes: readonly BalancerNode[];
  readonly ports: NodePorts;
  /**
   * The local address HAProxy connects to the nodes from (its `source`), so that the nodes'
   * API_TRUST_PROXY can name it; unset = the system's choice.
   */
  readonly sourceAddress?: string;
  readonly maxConnections?: number;
}

export class BalancerConfigError extends Error {
  override name = 'BalancerConfigError';
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const port = (value: number) => Number.isInteger(value) && value > 0 && value < 65_536;

function validate(options: BalancerOptions): void {
  const problems: string[] = [];
  if (options.nodes.length === 0) problems.push('at least one node is needed');
  const names = new Set<string>();
  for (const node of options.nodes) {
    if (!NAME.test(node.name))
      problems.push(`node name ${JSON.stringify(node.name)}: letters, digits, - _ . only`);
    if (names.has(node.name)) problems.push(`node name ${node.name} is used twice`);
    names.add(node.name);
    if (!/^[A-Za-z0-9.:[\]-]+$/.test(node.host))
      problems.push(`node ${node.name}: host ${JSON.stringify(node.host)}`);
  }
  for (const [what, value] of Object.entries(options.ports)) {
    if (!port(value)) problems.push(`${what} ${value}`);
  }
  for (const [what, bind] of [
    ['bind', options.bind],
    ['stats bind', options.statsBind],
  ] as const) {
    if (!/^[A-Za-z0-9.:[\]-]*:\d{1,5}$/.test(bind))
      problems.push(`${what} ${JSON.stringify(bind)}: expected address:port`);
  }
  if (options.sourceAddress !== undefined && isIP(options.sourceAddress) === 0) {
    problems.push(`source address ${JSON.stringify(options.sourceAddress)}: not an IP address`);
  }
  if (problems.length > 0)
    throw new BalancerConfigError(`invalid balancer configuration: ${problems.join('; ')}`);
}

export function renderHaproxyConfig(
  options: BalancerOptions,
  template = readFileSync(HAPROXY_TEMPLATE, 'utf8'),
): string {
  validate(options);
  const scalars: Record<string, string> = {
    BIND: options.bind,
    STATS_BIND: options.statsBind,
    SOURCE_ADDRESS: options.sourceAddress ?? '',
    MAX_CONNECTIONS: String(options.maxConnections ?? 4_096),
    API_PORT: String(options.ports.apiPort),
    API_ADMIN_PORT: String(options.ports.apiAdminPort),
    INGEST_ADMIN_PORT: String(options.ports.ingestAdminPort),
  };
  const out: string[] = [];
  for (const line of template.split('\n')) {
    const placeholders = [...line.matchAll(/\{\{([A-Za-z_.]+)\}\}/g)].map((m) => m[1]!);
    if (line.trimStart().startsWith('#') || placeholders.length === 0) {
      out.push(line);
      continue;
    }
    const rows: Record<string, string>[] = placeholders.some((p) => p.startsWith('node.'))
      ? options.nodes.map((n) => ({ 'node.name': n.name, 'node.host': n.host }))
      : [{}];
    for (const row of rows) {
      const values = { ...scalars, ...row };
      const unknown = placeholders.filter((p) => !(p in values));
      if (unknown.length > 0)
        throw new BalancerConfigError(`template: unknown placeholder {{${unknown[0]}}}`);
      if (placeholders.every((p) => values[p] === '')) continue;
      out.push(line.replace(/\{\{([A-Za-z_.]+)\}\}/g, (_, p: string) => values[p]!));
    }
  }
  return out.join('\n');
}
