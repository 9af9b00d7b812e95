import type { V1HTTPIngressPath, V1IngressBackend } from '@kubernetes/client-node';
import type { ServiceBackend } from '../../model/index.js';
import { resolveServiceBackend } from '../common/backend.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TranslateOptions } from '../types.js';
import type { IngressEntry } from './entry.js';
import { checkHost, generatedHostname } from '../common/hostname.js';
import { describePath, toPathMatch } from './path.js';
import type { TunaReason } from '../common/reasons.js';

/** IngressBackendResolution is a resolved Ingress backend, or the reason and message of the failure. */
type IngressBackendResolution = { ok: true; backend: ServiceBackend } | { ok: false; reason: TunaReason; message: string };

/**
 * resolveIngressBackend resolves an IngressBackend in the Ingress's own namespace: the Ingress API
 * cannot name another namespace, so a same-named Service elsewhere is never used (DESIGN.md,
 * "Namespace isolation"). Only Service backends are served.
 */
export function resolveIngressBackend(index: SnapshotIndex, namespace: string, backend: V1IngressBackend): IngressBackendResolution {
  const resource = backend.resource;
  if (resource)
    return {
      ok: false,
      reason: 'UnsupportedBackendKind',
      message: `the backend is a resource (${resource.apiGroup ? `${resource.apiGroup}/` : ''}${resource.kind} ${resource.name}); tuna routes to Services only`,
    };
  const service = backend.service;
  if (!service?.name) return { ok: false, reason: 'InvalidBackend', message: 'the backend names no Service' };
  const port = service.port?.number ?? (service.port?.name || undefined);
  const resolved = resolveServiceBackend(index, namespace, service.name, port);
  // Manifest files skip the API server's validation: a Service port outside 1-65535 is refused here.
  if (resolved.ok && !(Number.isInteger(resolved.backend.port) && resolved.backend.port >= 1 && resolved.backend.port <= 65535))
    return { ok: false, reason: 'InvalidServicePort', message: `Service ${namespace}/${service.name} port ${String(resolved.backend.port)} is not a port number (1-65535)` };
  return resolved;
}

/**
 * collectIngress reads one Ingress: its valid hosts, its valid paths with resolved backends, its
 * defaultBackend and TLS entries. Everything refused becomes a problem on the entry; conflicts with
 * other Ingresses are decided later (see route-table.ts).
 */
export function collectIngress(entry: IngressEntry, index: SnapshotIndex, options: TranslateOptions): void {
  const spec = entry.ingress.spec ?? {};
  const rules = spec.rules ?? [];
  const generated = lazyGeneratedHost(entry, options);
  if (rules.length === 0 && !spec.defaultBackend)
    entry.problems.push({ condition: 'Accepted', reason: 'NoRules', message: 'the Ingress has neither rules nor a defaultBackend; nothing to publish' });
  rules.forEach((rule, r) => {
    const host = ruleHost(entry, rule.host, r, generated);
    if (host === null) return;
    addHost(entry, host);
    (rule.http?.paths ?? []).forEach((p, i) => collectPath(entry, index, host, r, i, p));
  });
  if (spec.defaultBackend) {
    // With no rules at all, the defaultBackend is served on the generated hostname.
    if (rules.length === 0) {
      const host = generated();
      if (host !== null) addHost(entry, host);
    }
    const backend = resolveIngressBackend(index, entry.namespace, spec.defaultBackend);
    if (backend.ok) entry.fallback = backend.backend;
    else entry.problems.push({ condition: 'ResolvedRefs', reason: backend.reason, message: `spec.defaultBackend: ${backend.message}; it is not published` });
  }
  (spec.tls ?? []).forEach((tls, t) => {
    entry.tls.push({ index: t, secretName: tls.secretName ?? '', hosts: (tls.hosts ?? []).map((h) => h.toLowerCase()) });
  });
}

function addHost(entry: IngressEntry, host: string): void {
  if (!entry.hosts.includes(host)) entry.hosts.push(host);
}

/** lazyGeneratedHost computes `<name>-<namespace>.<baseDomain>` once, reporting it once if invalid. */
function lazyGeneratedHost(entry: IngressEntry, options: TranslateOptions): () => string | null {
  let generated: string | null | undefined;
  return () => {
    if (generated === undefined) {
      const g = generatedHostname(entry.ingress.metadata?.name ?? '', entry.namespace, options.baseDomain);
      generated = g.ok ? g.host : null;
      if (!g.ok)
        entry.problems.push({ condition: 'Accepted', reason: 'GeneratedHostnameInvalid', message: `${g.message}; rules without a host are not published` });
    }
    return generated;
  };
}

/** ruleHost returns the rule's normalised host (the generated one when it has none), or null if refused. */
function ruleHost(entry: IngressEntry, raw: string | undefined, r: number, generated: () => string | null): string | null {
  if (!raw) return generated();
  const c = checkHost(raw);
  if (c.ok) return c.host;
  entry.problems.push({ condition: 'Accepted', reason: 'InvalidHost', message: `spec.rules[${r}].host: ${c.message}; its paths are not published` });
  return null;
}

function collectPath(entry: IngressEntry, index: SnapshotIndex, host: string, r: number, i: number, p: V1HTTPIngressPath): void {
  const label = `spec.rules[${r}].http.paths[${i}] (${host} ${describePath(p.pathType, p.path)})`;
  const match = toPathMatch(p.pathType, p.path);
  if (!match.ok) {
    entry.problems.push({ condition: 'Accepted', reason: 'InvalidPath', message: `${label}: ${match.message}; it is not published` });
    return;
  }
  const backend = resolveIngressBackend(index, entry.namespace, p.backend ?? {});
  if (!backend.ok) {
    entry.problems.push({ condition: 'ResolvedRefs', reason: backend.reason, message: `${label}: ${backend.message}; it is not published` });
    return;
  }
  entry.paths.push({ owner: entry, host, rule: r, path: i, match: match.match, backend: backend.backend, label });
}
