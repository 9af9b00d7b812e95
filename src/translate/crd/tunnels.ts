/**
 * Tunnel → one fragment group `tunnel/<namespace>/<name>` with a HostClaim for its hostname
 * (http, tls), or a tcp-port binding (tcp). A Tunnel publishes a Service of its own namespace only;
 * every reference it makes (Service, Domain, TCPPort) is looked up there.
 */
import type { Tunnel } from '../../crd/index.js';
import type { ServiceBackend } from '../../model/index.js';
import { resolveServiceBackend } from '../common/backend.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { StatusBook } from '../common/meta.js';
import { createdOf, namespaceOf, sourceOf } from '../common/meta.js';
import type { Fragment, TranslateOptions } from '../types.js';
import type { DomainOutcome } from './domains.js';
import { tunnelHostname } from './hostname.js';
import type { Problem } from './status.js';
import { acceptObject, crdKey, crdRef, rejectObject } from './status.js';
import type { TcpPortOutcome } from './tcp-ports.js';
import type { TunnelTarget } from './tunnel-graph.js';
import { tunnelGraph } from './tunnel-graph.js';

/** TunnelContext is what a Tunnel's references resolve against. */
export interface TunnelContext {
  index: SnapshotIndex;
  options: TranslateOptions;
  domains: Map<string, DomainOutcome>;
  tcpPorts: Map<string, TcpPortOutcome>;
}

interface Resolved {
  target: TunnelTarget;
  backend: ServiceBackend;
}

/** resolveTarget finds the hostname (domainRef or generated) or the requested port (tcpPortRef or any). */
function resolveTarget(tunnel: Tunnel, ctx: TunnelContext): TunnelTarget | Problem {
  const ns = namespaceOf(tunnel);
  const spec = tunnel.spec;
  if (spec.protocol === 'tcp') {
    if (!spec.tcpPortRef) return { protocol: 'tcp', port: 0 };
    const outcome = ctx.tcpPorts.get(`${ns}/${spec.tcpPortRef.name}`);
    if (!outcome) return { reason: 'TCPPortNotFound', message: `TCPPort ${ns}/${spec.tcpPortRef.name} not found` };
    if (!outcome.ok)
      return { reason: 'TCPPortNotAccepted', message: `TCPPort ${ns}/${spec.tcpPortRef.name} is not accepted (${outcome.problem.reason})` };
    return { protocol: 'tcp', port: outcome.port };
  }
  if (!spec.domainRef) {
    const generated = tunnelHostname(tunnel.metadata.name ?? '', ns, ctx.options.baseDomain);
    return 'hostname' in generated ? { protocol: spec.protocol, hostname: generated.hostname } : generated;
  }
  const outcome = ctx.domains.get(`${ns}/${spec.domainRef.name}`);
  if (!outcome) return { reason: 'DomainNotFound', message: `Domain ${ns}/${spec.domainRef.name} not found` };
  if (!outcome.ok) return { reason: 'DomainNotAccepted', message: `Domain ${ns}/${spec.domainRef.name} is not accepted (${outcome.problem.reason})` };
  return { protocol: spec.protocol, hostname: outcome.hostname };
}

/** resolveTunnel resolves a Tunnel's target and Service, or says what is wrong with it. */
function resolveTunnel(tunnel: Tunnel, ctx: TunnelContext): Resolved | Problem {
  const target = resolveTarget(tunnel, ctx);
  if ('reason' in target) return target;
  const { name, port } = tunnel.spec.service;
  const protocol = tunnel.spec.protocol === 'http' ? undefined : tunnel.spec.protocol;
  const resolved = resolveServiceBackend(ctx.index, namespaceOf(tunnel), name, port, protocol);
  if (!resolved.ok) return { reason: resolved.reason, message: resolved.message };
  return { target, backend: resolved.backend };
}

/** statusFields are the spec-derived fields of `Tunnel.status` (the translator's share). */
function statusFields(target: TunnelTarget): Record<string, unknown> {
  if (target.protocol === 'tcp') return { requestedPort: target.port };
  return target.protocol === 'http' ? { hostname: target.hostname, url: `https://${target.hostname}` } : { hostname: target.hostname };
}

/**
 * translateTunnels turns decoded Tunnels (oldest first) into fragments and statuses. A TCPPort
 * serves one Tunnel: the oldest accepted one keeps it, later ones get `TCPPortInUse`.
 */
export function translateTunnels(tunnels: readonly Tunnel[], ctx: TunnelContext, book: StatusBook): Fragment[] {
  const fragments: Fragment[] = [];
  const portUsers = new Map<string, Tunnel>();
  for (const tunnel of tunnels) {
    const resolved = resolveTunnel(tunnel, ctx);
    if ('reason' in resolved) {
      rejectObject(book, tunnel, 'Tunnel', resolved);
      continue;
    }
    const ref = tunnel.spec.tcpPortRef;
    if (ref) {
      const key = `${namespaceOf(tunnel)}/${ref.name}`;
      const user = portUsers.get(key);
      if (user) {
        rejectObject(book, tunnel, 'Tunnel', { reason: 'TCPPortInUse', message: `TCPPort ${key} is already used by Tunnel ${crdKey(user)}, which is older` });
        continue;
      }
      portUsers.set(key, tunnel);
    }
    const { target, backend } = resolved;
    const owner = crdRef(tunnel, 'Tunnel');
    const graph = tunnelGraph(tunnel, sourceOf(owner), target, backend);
    const claims =
      target.protocol === 'tcp' ? [] : [{ hostname: target.hostname, bindingId: `binding/host/${target.hostname}`, owner, created: createdOf(tunnel) }];
    fragments.push({ group: `tunnel/${crdKey(tunnel)}`, graph, claims });
    const what = target.protocol === 'tcp' ? `tcp port ${target.port === 0 ? '(any)' : target.port}` : `${target.protocol}://${target.hostname}`;
    acceptObject(book, tunnel, 'Tunnel', `${what} → Service ${backend.service}:${backend.port}`, 'waiting for a tunnel connection to the edge', statusFields(target));
  }
  return fragments;
}
