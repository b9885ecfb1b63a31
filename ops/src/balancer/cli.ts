// `pnpm -s --filter @pda/ops balancer-config -- --bind … --node name=host:port:adminPort …`: prints
// the HAProxy configuration for those api nodes (docs/deployment-replicas.md).
import { parseArgs } from 'node:util';
import { cliArgs, runCli, UsageError } from '@pda/projections/cli';
import { BalancerConfigError, type BalancerNode, renderHaproxyConfig } from './haproxy-config.ts';

const USAGE = `usage: pnpm -s --filter @pda/ops balancer-config -- --bind ADDR:PORT --node NAME=HOST:PORT:ADMIN_PORT
         [--node ...] [--stats-bind ADDR:PORT] [--source ADDR] [--max-connections N]
  --bind         where partners connect (e.g. 0.0.0.0:8080)
  --node         one api node: its public port and its admin port (API_PORT, API_ADMIN_PORT); repeat
  --stats-bind   HAProxy's stats page (default 127.0.0.1:8404)
  --source       the address HAProxy connects to the nodes from (name it in their API_TRUST_PROXY)
prints haproxy.cfg on stdout; check it with: haproxy -c -f FILE`;

function node(spec: string): BalancerNode {
  const match = /^([^=]+)=(.+):(\d+):(\d+)$/.exec(spec);
  if (!match) throw new UsageError(`--node ${JSON.stringify(spec)}: expected NAME=HOST:PORT:ADMIN_PORT`);
  const [, name, host, port, adminPort] = match;
  return { name: name!, host: host!, port: Number(port), adminPort: Number(adminPort) };
}

await runCli(USAGE, async () => {
  const { values, positionals } = parseArgs({
    args: cliArgs(),
    options: {
      bind: { type: 'string' },
      node: { type: 'string', multiple: true },
      'stats-bind': { type: 'string', default: '127.0.0.1:8404' },
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
      ...(values.source === undefined ? {} : { sourceAddress: values.source }),
      ...(max === undefined ? {} : { maxConnections: Number(max) }),
    });
    process.stdout.write(config);
  } catch (error) {
    if (error instanceof BalancerConfigError) throw new UsageError(error.message);
    throw error;
  }
});
