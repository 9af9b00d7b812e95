import type { V1EndpointSlice } from '@kubernetes/client-node';
import type { ServiceBackend } from '../model/index.js';

/** Endpoint is one ready address and port of a Service port. */
export interface Endpoint {
  address: string;
  port: number;
}

/**
 * EndpointResolver gives the ready endpoints of a Service port at request time. In the cluster it
 * reads EndpointSlices from an informer cache; outside it is fed from manifest files.
 */
export interface EndpointResolver {
  /** resolve returns the ready endpoints of the backend's Service port (maybe none) */
  resolve(backend: Pick<ServiceBackend, 'namespace' | 'service' | 'portName'>): readonly Endpoint[];
}

/** serviceKey is `namespace/service` — how endpoints are indexed. */
export function serviceKey(namespace: string, service: string): string {
  return `${namespace}/${service}`;
}

/**
 * endpointsFromSlices lists the ready endpoints per `namespace/service` and port name. It follows
 * the EndpointSlice API: a slice belongs to the Service named by its `kubernetes.io/service-name`
 * label; an endpoint whose `conditions.ready` is unset counts as ready (discovery.k8s.io/v1); a
 * port's number is the target port to dial, its name the Service port name; TCP and UDP ports count.
 */
export function endpointsFromSlices(slices: readonly V1EndpointSlice[]): Map<string, Map<string, Endpoint[]>> {
  const out = new Map<string, Map<string, Endpoint[]>>();
  for (const slice of slices) {
    const service = slice.metadata?.labels?.['kubernetes.io/service-name'];
    const namespace = slice.metadata?.namespace ?? 'default';
    if (!service || (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6')) continue;
    const byPort = out.get(serviceKey(namespace, service)) ?? new Map<string, Endpoint[]>();
    out.set(serviceKey(namespace, service), byPort);
    for (const port of slice.ports ?? []) {
      // TCP and UDP ports (UDP backends: UDPRoute, a Service's UDP port); Service port names are
      // unique across protocols, so a name keys one of them. SCTP is never a backend.
      if (port.port === undefined || (port.protocol !== undefined && port.protocol !== 'TCP' && port.protocol !== 'UDP')) continue;
      const list = byPort.get(port.name ?? '') ?? [];
      byPort.set(port.name ?? '', list);
      for (const ep of slice.endpoints ?? []) {
        if (ep.conditions?.ready === false) continue;
        for (const address of ep.addresses) list.push({ address, port: port.port });
      }
    }
  }
  return out;
}

// The service key of each backend object resolved (the route graph's, which live as long as its table): made once.
const serviceKeys = new WeakMap<object, string>();

function serviceKeyOf(backend: Pick<ServiceBackend, 'namespace' | 'service'>): string {
  let key = serviceKeys.get(backend);
  if (key === undefined) serviceKeys.set(backend, (key = serviceKey(backend.namespace, backend.service)));
  return key;
}

/**
 * StaticEndpointResolver serves a fixed table of endpoints (the file provider, `tuna http`).
 * `replace` swaps the whole table atomically when the manifests change.
 */
export class StaticEndpointResolver implements EndpointResolver {
  private table: Map<string, Map<string, Endpoint[]>>;

  constructor(table: Map<string, Map<string, Endpoint[]>> = new Map()) {
    this.table = table;
  }

  /** fromEndpointSlices builds a resolver from EndpointSlice objects. */
  static fromEndpointSlices(slices: readonly V1EndpointSlice[]): StaticEndpointResolver {
    return new StaticEndpointResolver(endpointsFromSlices(slices));
  }

  /** replace swaps in a new table; requests already resolved keep their endpoint. */
  replace(table: Map<string, Map<string, Endpoint[]>>): void {
    this.table = table;
  }

  /** set replaces the endpoints of one Service port. */
  set(namespace: string, service: string, portName: string, endpoints: Endpoint[]): void {
    const key = serviceKey(namespace, service);
    const byPort = this.table.get(key) ?? new Map<string, Endpoint[]>();
    byPort.set(portName, endpoints);
    this.table.set(key, byPort);
  }

  /** resolve returns the endpoints of the port by name; an unnamed single port matches any name. */
  resolve(backend: Pick<ServiceBackend, 'namespace' | 'service' | 'portName'>): readonly Endpoint[] {
    const byPort = this.table.get(serviceKeyOf(backend));
    if (!byPort) return [];
    const named = byPort.get(backend.portName);
    if (named) return named;
    // A Service with a single unnamed port has slices whose port name is '' (or absent).
    return byPort.size === 1 ? ([...byPort.values()][0] ?? []) : [];
  }
}

/**
 * EndpointPicker spreads requests over a backend's endpoints round-robin, independently per
 * Service port, so that one busy route does not skew another's order.
 */
export class EndpointPicker {
  private readonly cursors = new Map<string, number>();

  /** pick returns the next endpoint of the list, or undefined when it is empty. */
  pick(key: string, endpoints: readonly Endpoint[]): Endpoint | undefined {
    if (endpoints.length === 0) return undefined;
    const n = this.cursors.get(key) ?? 0;
    this.cursors.set(key, (n + 1) % 1_000_000);
    return endpoints[n % endpoints.length];
  }
}
