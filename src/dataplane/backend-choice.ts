import type { Backend, ServiceBackend } from '../model/index.js';
import { pickBackend } from './balancer.js';
import type { Endpoint } from './endpoints.js';
import type { ProxyDeps } from './http-proxy.js';

/** BackendChoice is an endpoint to dial, or the local answer to give instead. */
export type BackendChoice = { kind: 'endpoint'; endpoint: Endpoint; backend: ServiceBackend; target: string } | { kind: 'local'; status: number; body: string };

/**
 * chooseEndpoint picks a backend by weight and one of its ready endpoints: all weights 0 → 500,
 * an unavailable backend → its status, no ready endpoint → 503 saying so.
 */
export function chooseEndpoint(deps: Pick<ProxyDeps, 'random' | 'picker' | 'endpoints'>, backends: readonly Backend[]): BackendChoice {
  const backend = pickBackend(backends, deps.random);
  if (!backend) return { kind: 'local', status: 500, body: 'route has no backend with weight\n' };
  if (backend.kind === 'unavailable') return { kind: 'local', status: backend.statusCode, body: 'backend unavailable\n' };
  const key = `${backend.namespace}/${backend.service}:${backend.portName || backend.port}`;
  const endpoint = deps.picker.pick(key, deps.endpoints.resolve(backend));
  if (!endpoint) return { kind: 'local', status: 503, body: `no ready endpoint for service ${backend.namespace}/${backend.service}\n` };
  return { kind: 'endpoint', endpoint, backend, target: `${endpoint.address}:${endpoint.port}` };
}
