import type { V1Service } from '@kubernetes/client-node';
import type { BackendProtocol, Listener, ObjectRef, RouteGraph, ServiceBackend } from '../../model/index.js';
import { compareStrings, emptyGraph } from '../../model/index.js';
import type { StatusBook } from '../common/meta.js';
import { createdOf, namespaceOf, sourceOf } from '../common/meta.js';
import { generatedHostname } from '../common/hostname.js';
import { writeReport } from '../common/report.js';
import type { Problem } from '../common/report.js';
import type { Fragment, HostClaim, TranslateOptions } from '../types.js';
import type { PortPlan } from './port-plan.js';
import { planPort } from './port-plan.js';

/** The edge's shared HTTP and HTTPS ports, where HTTP hostnames of Services are served. */
const httpPort = 80;
const httpsPort = 443;

/** ServiceWork is one Service while it is translated. */
interface ServiceWork {
  svc: V1Service;
  ref: ObjectRef;
  namespace: string;
  name: string;
  created: string;
  graph: RouteGraph;
  claims: HostClaim[];
  problems: Problem[];
  /** published hostname → public ports, for `status.loadBalancer` */
  /** hostname -> `<port>/<protocol>` -> the status port */
  addresses: Map<string, Map<string, { port: number; protocol: 'TCP' | 'UDP' }>>;
  published: string[];
}

/**
 * translateService translates one tuna LoadBalancer Service into its own fragment (group
 * `service/<namespace>/<name>`) and records its status in `book`.
 */
export function translateService(svc: V1Service, options: TranslateOptions, book: StatusBook, isDuplicated = false): Fragment {
  const namespace = namespaceOf(svc);
  const name = svc.metadata?.name ?? '';
  const work: ServiceWork = {
    svc,
    ref: { group: '', kind: 'Service', namespace, name },
    namespace,
    name,
    created: createdOf(svc),
    graph: emptyGraph(),
    claims: [],
    problems: [],
    addresses: new Map(),
    published: [],
  };
  if (isDuplicated)
    work.problems.push({
      condition: 'Accepted',
      reason: 'DuplicateService',
      message: `the manifests hold Service ${namespace}/${name} more than once; only the oldest copy is used`,
    });
  const plans = (svc.spec?.ports ?? []).map(planPort);
  if (plans.length === 0) work.problems.push({ condition: 'Accepted', reason: 'NoPorts', message: 'the Service has no ports; nothing to publish' });
  const own = generatedHostname(name, namespace, options.baseDomain);
  let httpSeen = 0;
  const seen = new Set<string>();
  for (const plan of plans) {
    if (plan.kind === 'unsupported') {
      work.problems.push({ condition: 'Accepted', reason: plan.reason, message: `${plan.message}; it is not published` });
      continue;
    }
    if (isRepeatedPort(plan, seen)) {
      work.problems.push({ condition: 'Accepted', reason: 'DuplicatePort', message: `${plan.label}: repeats the name or number of an earlier ${plan.kind === 'udp' ? 'UDP' : 'TCP'} port; it is not published` });
      continue;
    }
    if (plan.kind === 'tcp' || plan.kind === 'udp') publishPort(work, plan, own.ok ? own.host : options.baseDomain.toLowerCase());
    else publishHttp(work, plan, options, httpSeen++ === 0);
  }
  writeStatus(work, book);
  return { group: `service/${namespace}/${name}`, graph: work.graph, claims: work.claims };
}

/**
 * isRepeatedPort records a port's name and number (the number per transport: 53/TCP and 53/UDP are
 * two ports) and says whether an earlier port had either. A valid Service never repeats them, but
 * manifest files skip the API server's validation and a repeated port would give two graph nodes one id.
 */
function isRepeatedPort(plan: PortPlan, seen: Set<string>): boolean {
  const keys = [`name ${portKey(plan)}`, `port ${plan.port.port}/${plan.kind === 'udp' ? 'UDP' : 'TCP'}`];
  if (keys.some((k) => seen.has(k))) return true;
  for (const k of keys) seen.add(k);
  return false;
}

/** portKey names a port in ids: its name, or its number when unnamed (a single-port Service). */
function portKey(plan: PortPlan): string {
  return plan.port.name || String(plan.port.port);
}

/**
 * backendOf is the Service port itself as a backend. It is built from the port in hand rather
 * than looked up again: the Service is of type LoadBalancer (never ExternalName) and planPort has
 * already checked the protocol and the number.
 */
function backendOf(work: ServiceWork, plan: PortPlan, protocol: BackendProtocol): ServiceBackend {
  return { kind: 'service', namespace: work.namespace, service: work.name, port: plan.port.port, portName: plan.port.name ?? '', protocol, weight: 1 };
}

/**
 * publishPort asks the edge for the Service's own port number; the edge may assign another one
 * from its pool, which only the reconciler can learn and report. A UDP port is a tcp-port binding
 * of its own (`.../udp/<port>`) whose key is a `udp` key: the edge opens the port's UDP socket for
 * it (docs/protocol.md §4.6), and the listener and backend speak UDP.
 */
function publishPort(work: ServiceWork, plan: PortPlan & { kind: 'tcp' | 'udp' }, statusHost: string): void {
  const transport = plan.kind;
  const backend = backendOf(work, plan, transport);
  const port = plan.port.port;
  const section = `port/${portKey(plan)}`;
  const bindingId = `binding/tcp-port/${work.namespace}/${work.name}/${transport === 'udp' ? 'udp/' : ''}${port}`;
  const listenerId = `${bindingId}/listener/${transport}`;
  const source = sourceOf(work.ref, section);
  work.graph.bindings.push({ id: bindingId, kind: 'tcp-port', hostnames: [], port, ...(transport === 'udp' ? { transport } : {}), source });
  work.graph.listeners.push({ id: listenerId, bindingId, name: transport, port, protocol: transport, source });
  work.graph.streamRoutes.push({ id: `service/${work.namespace}/${work.name}/${section}`, listenerId, source, hostnames: [], backends: [backend] });
  addAddress(work, statusHost, port, transport === 'udp' ? 'UDP' : 'TCP');
  work.published.push(`${transport} port ${port}`);
}

/**
 * publishHttp serves the port as an HTTP hostname: the first HTTP port (in spec order) gets the
 * Service's own `<name>-<namespace>.<baseDomain>`, every other one `<port-name>-<name>-<namespace>.<baseDomain>`.
 * The hostname is served on http (80) and on https (443) with TLS terminated at the edge with its
 * certificate for the base domain (DESIGN.md "TLS modes": edge is the default for reserved
 * subdomains), the same shape as an `http` Tunnel; both listeners carry the one route `/`.
 */
function publishHttp(work: ServiceWork, plan: PortPlan & { kind: 'http' }, options: TranslateOptions, isFirst: boolean): void {
  const host = generatedHostname(work.name, work.namespace, options.baseDomain, isFirst ? undefined : portKey(plan));
  if (!host.ok) {
    work.problems.push({ condition: 'Accepted', reason: 'GeneratedHostnameInvalid', message: `${plan.label}: ${host.message}; it is not published` });
    return;
  }
  const backend = backendOf(work, plan, plan.protocol);
  const hostname = host.host;
  const section = `port/${portKey(plan)}`;
  const source = sourceOf(work.ref, section);
  const bindingId = `binding/host/${hostname}`;
  work.graph.bindings.push({ id: bindingId, kind: 'host', hostnames: [hostname], source });
  const listeners: Listener[] = [
    { id: `${bindingId}/listener/http`, bindingId, name: 'http', port: httpPort, protocol: 'http', source },
    { id: `${bindingId}/listener/https`, bindingId, name: 'https', port: httpsPort, protocol: 'https', tls: { mode: 'edge', certificates: [] }, source },
  ];
  for (const listener of listeners) {
    work.graph.listeners.push(listener);
    work.graph.virtualHosts.push({
      id: `${listener.id}/vhost/${hostname}`,
      listenerId: listener.id,
      hostname,
      routes: [
        {
          id: `service/${work.namespace}/${work.name}/${listener.name}/${section}`,
          source,
          origin: { created: work.created, key: `${work.namespace}/${work.name}`, rule: 0, match: 0 },
          match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [] },
          filters: [],
          backends: [backend],
        },
      ],
    });
    addAddress(work, hostname, listener.port);
  }
  work.claims.push({ hostname, bindingId, owner: work.ref, created: work.created });
  work.published.push(`http(s)://${hostname} (port ${portKey(plan)}, ${plan.protocol})`);
}

function addAddress(work: ServiceWork, hostname: string, port: number, protocol: 'TCP' | 'UDP' = 'TCP'): void {
  let ports = work.addresses.get(hostname);
  if (!ports) work.addresses.set(hostname, (ports = new Map()));
  ports.set(`${port}/${protocol}`, { port, protocol });
}

/**
 * writeStatus fills `status.loadBalancer.ingress`: one entry per hostname with the public ports
 * published on it (TCP and UDP ports under the Service's own hostname, HTTP hostnames with ports 80
 * and 443).
 */
function writeStatus(work: ServiceWork, book: StatusBook): void {
  const status = book.entry(work.svc, work.ref);
  const ingress = [...work.addresses]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([hostname, ports]) => ({ hostname, ports: [...ports.values()].sort((a, b) => a.port - b.port || compareStrings(a.protocol, b.protocol)) }));
  status.status = { loadBalancer: ingress.length > 0 ? { ingress } : {} };
  writeReport(status, work.problems, {
    types: ['Accepted'],
    acceptedMessage: `tuna is the load balancer of this Service (loadBalancerClass ${String(work.svc.spec?.loadBalancerClass)})`,
    published: work.published,
  });
}
