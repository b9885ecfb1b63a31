// `pnpm -s --filter @pda/operator-tools balancer-config -- --bind … --node name=host …`: prints
// the HAProxy configuration for those api nodes (docs/deployment-replicas.md).
import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import { BalancerConfigError, type BalancerNode, renderHaproxyConfig } from './haproxy-config.ts';

const USAGE = `usage: pnpm -s --filter @pda/operator-tools balancer-config -- --bind ADDR:PORT --node NAME=HOST [--node ...]
         [--api-port 8080] [--api-admin-port 9465] [--ingest-admin-port 9464]
         [--stats-bind 127.0.0.1:8404] [--source ADDR] [--max-connections 4096]
  --bind               where partners connect (e.g. 0.0.0.0:8080)
  --node               one node (an api + ingest pair) by address, IPv6 in brackets; repeat per node
  --api-port           every node's API_PORT (partners' requests)
  --api-admin-port     every node's API_ADMIN_PORT (/healthz: the process answers)
  --ingest-admin-port  every node's INGEST_ADMIN_PORT (/readyz: ingest caught up)
  --stats-bind         HAProxy's stats page
  --source             the address HAProxy connects to the nodes from (name it in their API_TRUST_PROXY)
prints haproxy.cfg on stdout; check it with: haproxy -c -f FILE`;

function node(spec: string): BalancerNode {
  const match = /^([^=]+)=(.+)$/.exec(spec);
  if (!match) throw new UsageError(`--node ${JSON.stringify(spec)}: expected NAME=HOST`);
  return { name: match[1]!, host: match[2]! };
}

function portOption(name: string, value: string): number {
  if (!/^\d{1,5}$/.test(value))
    throw new UsageError(`--${name} must be a port number, got ${JSON.stringify(value)}`);
  return Number(value);
}

await runCli(USAGE, async () => {
  const { values, positionals } = parseArgs({
    args: cliArgs(),
    options: {
      bind: { type: 'string' },
      node: { type: 'string', multiple: true },
      'stats-bind': { type: 'string', default: '127.0.0.1:8404' },
      'api-port': { type: 'string', default: '8080' },
      'api-admin-port': { type: 'string', default: '9465' },
      'ingest-admin-port': { type: 'string', default: '9464' },
      source: { type: 'string' },
      'max-connections': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.bind === undefined) throw new UsageError('--bind is required');
  if (!values.node?.length) throw new UsageError('--node is required (one per api node)');
  const max = values['max-connections'];
  if (max !== undefined && !/^[1-9]\d{0,6}$/.test(max))
    throw new UsageError('--max-connections must be a positive whole number');
  try {
    const config = renderHaproxyConfig({
      bind: values.bind,
      statsBind: values['stats-bind'],
      nodes: values.node.map(node),
      ports: {
        apiPort: portOption('api-port', values['api-port']),
        apiAdminPort: portOption('api-admin-port', values['api-admin-port']),
        ingestAdminPort: portOption('ingest-admin-port', values['ingest-admin-port']),
      },
      ...(values.source === undefined ? {} : { sourceAddress: values.source }),
      ...(max === undefined ? {} : { maxConnections: Number(max) }),
    });
    process.stdout.write(config);
  } catch (error) {
    if (error instanceof BalancerConfigError) throw new UsageError(error.message);
    throw error;
  }
});
