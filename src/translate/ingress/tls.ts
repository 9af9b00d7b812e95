import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { IngressEntry, TlsRequest } from './entry.js';
import { whyFirst } from './entry.js';
import type { RouteTable } from './route-table.js';
import { hostRoutes } from './route-table.js';
import type { TunaReason } from '../common/reasons.js';

/** The Secret type whose keys (`tls.crt`, `tls.key`) the API server validates. */
const tlsSecretType = 'kubernetes.io/tls';

interface FailedTls {
  entry: IngressEntry;
  request: TlsRequest;
  reason: TunaReason;
  problem: string;
  hosts: string[];
}

/**
 * assignCertificates gives each host at most one certificate from the `spec.tls` entries of the
 * tuna Ingresses (entries in precedence order). TLS is terminated in the cluster with the Secret, in
 * the Ingress's own namespace; the edge only routes the raw stream by SNI (DESIGN.md, "TLS modes").
 * A tls host covers the Ingress's rule hosts equal to it or, for a `*.suffix` tls host, the exact
 * rule hosts one label under the suffix (what such a certificate is valid for, RFC 6125 §6.4.3); a
 * tls host covering no rule host of the Ingress is reported `TLSHostWithoutRule`. When two
 * Ingresses (or two entries of one) name different Secrets for one host, the first in precedence
 * order is used and the other is reported `TLSCertificateConflict`. A missing Secret, or one not of type
 * `kubernetes.io/tls`, is reported and its hosts are served over http only, unless another Ingress
 * supplies a certificate for them (the message says which).
 */
export function assignCertificates(table: RouteTable, entries: IngressEntry[], index: SnapshotIndex): void {
  const failed: FailedTls[] = [];
  for (const entry of entries) {
    for (const request of entry.tls) {
      const hosts = entry.hosts.filter((h) => request.hosts.some((t) => covers(t, h)));
      if (request.hosts.length === 0) {
        entry.problems.push({
          condition: 'Accepted',
          reason: 'TLSWithoutHosts',
          message: `spec.tls[${request.index}]: lists no hosts; list the rule hosts its certificate is for (it is not used)`,
        });
        continue;
      }
      const unused = request.hosts.filter((t) => !entry.hosts.some((h) => covers(t, h)));
      if (unused.length > 0)
        entry.problems.push({
          condition: 'Accepted',
          reason: 'TLSHostWithoutRule',
          message: `spec.tls[${request.index}]: ${unused.join(', ')} ${unused.length === 1 ? 'matches' : 'match'} no valid rule host of this Ingress; not used`,
        });
      const secretProblem = checkSecret(index, entry.namespace, request.secretName);
      if (secretProblem) {
        if (hosts.length > 0) failed.push({ entry, request, hosts, ...secretProblem });
        continue;
      }
      for (const host of hosts) assignOne(entry, request, host, table);
    }
  }
  for (const f of failed) {
    const fates = f.hosts.map((h) => {
      const cert = table.get(h)?.certificate;
      return cert
        ? `${h} is still served over https with Secret ${cert.secret.namespace}/${cert.secret.name} of Ingress ${cert.owner.key}`
        : `${h} is served over http only`;
    });
    f.entry.problems.push({ condition: 'ResolvedRefs', reason: f.reason, message: `spec.tls[${f.request.index}]: ${f.problem}; ${fates.join(', ')}` });
  }
}

/** covers says whether a certificate for `tlsHost` is valid for the rule host `host`. */
function covers(tlsHost: string, host: string): boolean {
  if (tlsHost === host) return true;
  if (!tlsHost.startsWith('*.') || host.startsWith('*.')) return false;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot) === tlsHost.slice(1);
}

function checkSecret(index: SnapshotIndex, namespace: string, name: string): { reason: TunaReason; problem: string } | undefined {
  if (name === '') return { reason: 'TLSSecretNotFound', problem: 'names no secretName' };
  const secret = index.secrets.get(`${namespace}/${name}`);
  if (!secret) return { reason: 'TLSSecretNotFound', problem: `Secret ${namespace}/${name} not found` };
  const type = secret.type ?? 'Opaque';
  if (type !== tlsSecretType)
    return { reason: 'TLSSecretInvalid', problem: `Secret ${namespace}/${name} is of type ${type}, not ${tlsSecretType}` };
  return undefined;
}

function assignOne(entry: IngressEntry, request: TlsRequest, host: string, table: RouteTable): void {
  const routes = hostRoutes(table, host);
  const prior = routes.certificate;
  if (!prior) {
    routes.certificate = { owner: entry, tlsIndex: request.index, secret: { namespace: entry.namespace, name: request.secretName } };
    return;
  }
  if (prior.secret.namespace === entry.namespace && prior.secret.name === request.secretName) return;
  const by = prior.owner === entry ? `spec.tls[${prior.tlsIndex}] of this Ingress` : `Ingress ${prior.owner.key}`;
  entry.problems.push({
    condition: 'Conflicted',
    reason: 'TLSCertificateConflict',
    message: `spec.tls[${request.index}]: ${host} is already served with Secret ${prior.secret.namespace}/${prior.secret.name} of ${by}, which takes precedence because ${whyFirst(prior.owner, entry)}; Secret ${entry.namespace}/${request.secretName} is not used for ${host}`,
  });
}
