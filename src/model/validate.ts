import { validatePolicies } from './policies.js';
import { validateExternalAuth } from './filters.js';
import type { Backend, BackendTls, HttpRoute, RouteGraph, SourceRef } from './types.js';

/**
 * validate checks the graph's own invariants: unique ids, links that resolve, ports and weights in
 * range, well-formed hostnames. Translators must never produce an invalid graph (a user's mistake
 * becomes a status condition instead), so a non-empty result is a programmer error.
 */
export function validate(graph: RouteGraph): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  const unique = (id: string): void => {
    if (seen.has(id)) errors.push(`duplicate id ${id}`);
    seen.add(id);
  };
  const bindings = new Map(graph.bindings.map((b) => [b.id, b]));
  const listeners = new Map(graph.listeners.map((l) => [l.id, l]));

  for (const b of graph.bindings) {
    unique(b.id);
    checkOnce(b, errors, bindingProblems);
  }
  const listenerPorts = new Map<string, string>();
  for (const l of graph.listeners) {
    unique(l.id);
    if (!bindings.has(l.bindingId)) errors.push(`${l.id}: unknown binding ${l.bindingId}`);
    checkOnce(l, errors, listenerProblems);
    // Listeners of one binding may share a port only if they speak compatible protocols.
    // A UDP port is its own socket: it shares a number with a TCP one without meeting it (DNS 53/udp, 53/tcp).
    const key = `${l.bindingId}:${l.port}${l.protocol === 'udp' ? '/udp' : ''}`;
    const family = l.protocol === 'tcp' || l.protocol === 'udp' ? l.protocol : l.protocol === 'http' ? 'http' : 'tls';
    const prior = listenerPorts.get(key);
    if (prior !== undefined && prior !== family) errors.push(`${l.id}: port ${l.port} already used by a ${prior} listener`);
    listenerPorts.set(key, family);
  }
  for (const v of graph.virtualHosts) {
    unique(v.id);
    const l = listeners.get(v.listenerId);
    if (!l) errors.push(`${v.id}: unknown listener ${v.listenerId}`);
    else if (l.protocol === 'tcp' || (l.protocol === 'tls' && l.tls?.mode === 'passthrough'))
      errors.push(`${v.id}: virtual host on a ${l.protocol} listener`);
    const isHostnameValid = locallyValid.has(v) || v.hostname === '*' || isValidHostPattern(v.hostname);
    if (!isHostnameValid) errors.push(`${v.id}: invalid hostname ${v.hostname}`);
    let areRoutesValid = true;
    for (const r of v.routes) {
      unique(r.id);
      areRoutesValid = checkOnce(r, errors, validateRoute) && areRoutesValid;
    }
    if (isHostnameValid && areRoutesValid) locallyValid.add(v);
  }
  for (const s of graph.streamRoutes) {
    unique(s.id);
    if (!listeners.has(s.listenerId)) errors.push(`${s.id}: unknown listener ${s.listenerId}`);
    errors.push(...validateBackends(s.id, s.backends));
    // Backend filters transform HTTP messages; a byte stream has none to transform.
    if (s.backends.some((b) => b.kind === 'service' && b.filters !== undefined)) errors.push(`${s.id}: stream route backend with filters`);
  }
  for (const r of graph.reservations) {
    unique(r.id);
    if (r.kind === 'domain' && (r.hostname === undefined || !isValidHostPattern(r.hostname)))
      errors.push(`${r.id}: invalid hostname ${String(r.hostname)}`);
    if (r.kind === 'tcp-port' && (r.port === undefined || !isPortOrZero(r.port))) errors.push(`${r.id}: invalid port`);
  }
  return errors;
}

/**
 * locallyValid holds the nodes whose own checks (everything but unique ids and links to other
 * nodes) found nothing. Graph nodes are never changed once built, and an incremental translation
 * hands the nodes of what did not change again: at 10,000 hosts the hostname and route checks
 * were most of validate's time in every sync (docs/tunnel-performance.md §13).
 */
const locallyValid = new WeakSet<object>();

/** checkOnce adds a node's own problems to `errors` unless it passed them before; true when it has none. */
function checkOnce<T extends object>(node: T, errors: string[], problemsOf: (node: T) => string[]): boolean {
  if (locallyValid.has(node)) return true;
  const problems = problemsOf(node);
  if (problems.length > 0) {
    errors.push(...problems);
    return false;
  }
  locallyValid.add(node);
  return true;
}

function bindingProblems(b: RouteGraph['bindings'][number]): string[] {
  const errors: string[] = [];
  for (const h of b.hostnames) if (!isValidHostPattern(h)) errors.push(`${b.id}: invalid hostname ${h}`);
  if (b.kind === 'host' && b.hostnames.length === 0) errors.push(`${b.id}: host binding without hostname`);
  if (b.port !== undefined && !isPortOrZero(b.port)) errors.push(`${b.id}: invalid port ${b.port}`);
  if (b.connections !== undefined && !(Number.isInteger(b.connections) && b.connections >= 1)) errors.push(`${b.id}: invalid connections ${b.connections}`);
  if (b.dedicated !== undefined && b.kind !== 'address') errors.push(`${b.id}: a dedicated data plane is for address bindings (Gateways) only`);
  const replicas = b.dedicated?.replicas;
  if (replicas !== undefined && !(Number.isInteger(replicas) && replicas >= 1)) errors.push(`${b.id}: invalid dedicated replicas ${replicas}`);
  if (b.policies) errors.push(...validatePolicies(b.id, b.policies));
  return errors;
}

function listenerProblems(l: RouteGraph['listeners'][number]): string[] {
  const errors: string[] = [];
  if (!isPort(l.port)) errors.push(`${l.id}: invalid port ${l.port}`);
  if (l.hostname !== undefined && !isValidHostPattern(l.hostname)) errors.push(`${l.id}: invalid hostname ${l.hostname}`);
  if ((l.protocol === 'http' || l.protocol === 'tcp') && l.tls) errors.push(`${l.id}: ${l.protocol} listener with tls`);
  if ((l.protocol === 'https' || l.protocol === 'tls') && !l.tls) errors.push(`${l.id}: ${l.protocol} listener without tls`);
  const cv = l.tls?.clientValidation;
  if (cv && (l.protocol !== 'https' || l.tls?.mode !== 'terminate-in-cluster')) errors.push(`${l.id}: client validation on a listener that does not terminate HTTPS`);
  if (cv && !cv.caPem.includes('-----BEGIN CERTIFICATE-----')) errors.push(`${l.id}: client validation without a PEM CA certificate`);
  if (cv && cv.mode !== 'AllowValidOnly' && cv.mode !== 'AllowInsecureFallback') errors.push(`${l.id}: invalid client validation mode ${String(cv.mode)}`);
  return errors;
}

function validateRoute(r: HttpRoute): string[] {
  const errors: string[] = [];
  if (!r.match.path.value.startsWith('/') && r.match.path.type !== 'RegularExpression')
    errors.push(`${r.id}: path ${r.match.path.value} does not start with /`);
  const redirects = r.filters.filter((f) => f.type === 'RequestRedirect' || f.type === 'DirectResponse').length;
  if (redirects === 0 && r.backends.length === 0) errors.push(`${r.id}: no backend and no redirect`);
  errors.push(...validateBackends(r.id, r.backends));
  if (r.policies) errors.push(...validatePolicies(r.id, r.policies));
  for (const f of r.filters) {
    if (f.type === 'RequestMirror' && f.backend.filters !== undefined) errors.push(`${r.id}: mirror backend with filters`);
    if (f.type === 'ExternalAuth') {
      errors.push(...validateExternalAuth(r.id, f));
      if (f.backend.tls) errors.push(...validateBackendTls(r.id, f.backend.tls));
    }
  }
  return errors;
}

function validateBackends(id: string, backends: Backend[]): string[] {
  const errors: string[] = [];
  for (const b of backends) {
    if (!Number.isInteger(b.weight) || b.weight < 0 || b.weight > 1_000_000) errors.push(`${id}: invalid weight ${b.weight}`);
    if (b.kind === 'service' && !isPort(b.port)) errors.push(`${id}: invalid backend port ${b.port}`);
    if (b.kind === 'service' && b.filters?.length === 0) errors.push(`${id}: empty backend filter list (omit it)`);
    if (b.kind === 'service' && b.tls) errors.push(...validateBackendTls(id, b.tls));
  }
  return errors;
}

function validateBackendTls(id: string, t: BackendTls): string[] {
  const errors: string[] = [];
  if (!isValidHostPattern(t.serverName) || t.serverName.startsWith('*.')) errors.push(`${id}: invalid backend TLS server name ${t.serverName}`);
  if (t.ca.kind === 'pem' && !t.ca.pem.includes('-----BEGIN CERTIFICATE-----')) errors.push(`${id}: backend TLS CA is not PEM`);
  if (t.subjectAltNames?.length === 0) errors.push(`${id}: empty backend subjectAltNames (omit it)`);
  for (const n of t.subjectAltNames ?? []) if (n.value === '') errors.push(`${id}: empty backend subjectAltName`);
  return errors;
}

function isPort(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 65535;
}

function isPortOrZero(n: number): boolean {
  return n === 0 || isPort(n);
}

const label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * isValidHostPattern accepts an RFC 1123 DNS name, optionally with one leading `*.` label
 * (Gateway API Hostname). IP literals are not host names and are refused.
 */
export function isValidHostPattern(host: string): boolean {
  const name = host.startsWith('*.') ? host.slice(2) : host;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (!labels.every((l) => label.test(l))) return false;
  // An all-numeric last label makes it an IPv4 literal (RFC 1123 §2.1, RFC 3696 §2).
  return !/^[0-9]+$/.test(labels[labels.length - 1] ?? '');
}

/**
 * problemSources names, for each problem validate() found, the object its node came from (the
 * node the problem starts with: `<id>: …` or `duplicate id <id>`), or undefined for a node without
 * a source (a virtual host). The operator records its refusal of a graph on these objects.
 */
export function problemSources(graph: RouteGraph, problems: readonly string[]): (SourceRef | undefined)[] {
  const sources = new Map<string, SourceRef>();
  for (const n of [...graph.bindings, ...graph.listeners, ...graph.streamRoutes, ...graph.reservations]) sources.set(n.id, n.source);
  for (const v of graph.virtualHosts) for (const r of v.routes) sources.set(r.id, r.source);
  return problems.map((p) => sources.get(p.startsWith('duplicate id ') ? p.slice('duplicate id '.length) : p.slice(0, Math.max(0, p.indexOf(': ')))));
}
