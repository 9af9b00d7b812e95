import type { Backend, ServiceBackend } from '../model/index.js';
import { pickBackend } from './balancer.js';
import type { Endpoint } from './endpoints.js';
import type { ProxyDeps } from './http-proxy.js';

/** BackendChoice is an endpoint to dial, or the local answer to give instead. */
export type BackendChoice = { kind: 'endpoint'; endpoint: Endpoint; backend: ServiceBackend } | { kind: 'local'; status: number; body: string };

// The picker's key of each backend of the route graph, made once (the graph's objects live as long as its table).
const pickerKeys = new WeakMap<ServiceBackend, string>();

function pickerKey(backend: ServiceBackend): string {
  let key = pickerKeys.get(backend);
  if (key === undefined) pickerKeys.set(backend, (key = `${backend.namespace}/${backend.service}:${backend.portName || backend.port}`));
  return key;
}

/**
 * chooseEndpoint picks a backend by weight and one of its ready endpoints: all weights 0 → 500,
 * an unavailable backend → its status, no ready endpoint → 503 saying so.
 */
export function chooseEndpoint(deps: Pick<ProxyDeps, 'random' | 'picker' | 'endpoints'>, backends: readonly Backend[]): BackendChoice {
  const backend = pickBackend(backends, deps.random);
  if (!backend) return { kind: 'local', status: 500, body: 'route has no backend with weight\n' };
  if (backend.kind === 'unavailable') return { kind: 'local', status: backend.statusCode, body: 'backend unavailable\n' };
  const endpoint = deps.picker.pick(pickerKey(backend), deps.endpoints.resolve(backend));
  if (!endpoint) return { kind: 'local', status: 503, body: `no ready endpoint for service ${backend.namespace}/${backend.service}\n` };
  return { kind: 'endpoint', endpoint, backend };
}
