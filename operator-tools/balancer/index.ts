// @pda/operator-tools/balancer: HAProxy's configuration for the api replicas, rendered from haproxy.cfg.template.

export type { BalancerNode, BalancerOptions, NodePorts } from './haproxy-config.ts';
export { BalancerConfigError, HAPROXY_TEMPLATE, renderHaproxyConfig } from './haproxy-config.ts';
