/**
 * The LoadBalancer Service translator: a Service of `type: LoadBalancer` with
 * `spec.loadBalancerClass: tuna` gets a TCP port on the edge for each TCP port, or an HTTP hostname
 * for ports whose appProtocol is http, kubernetes.io/h2c or kubernetes.io/ws. Each Service is a
 * fragment group of its own. See docs/translators/service.md.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { compareStrings, stableStringify } from '../../model/index.js';
import { StatusBook, createdOf, nameKey } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import { translateService } from './translate-service.js';

/**
 * translateLoadBalancerServices translates every tuna LoadBalancer Service. A Service of another
 * class, or of class tuna but not of type LoadBalancer, is ignored silently (no status), as the
 * Kubernetes API only honours loadBalancerClass on LoadBalancer Services.
 */
export function translateLoadBalancerServices(index: SnapshotIndex, options: TranslateOptions): TranslatorOutput {
  const book = new StatusBook();
  const ours = index.snapshot.services.filter((svc) => isTunaLoadBalancer(svc, options)).sort(compareServices);
  // Only manifest files can hold one Service twice; the oldest copy is used, the others reported on it.
  const copies = new Map<string, number>();
  for (const svc of ours) copies.set(nameKey(svc), (copies.get(nameKey(svc)) ?? 0) + 1);
  const fragments = [];
  const done = new Set<string>();
  for (const svc of ours) {
    const key = nameKey(svc);
    if (done.has(key)) continue;
    done.add(key);
    fragments.push(translateService(svc, options, book, (copies.get(key) ?? 0) > 1));
  }
  return { fragments, statuses: book.all() };
}

/** compareServices orders Services oldest first (unknown last), then by `namespace/name`, then by content. */
function compareServices(a: V1Service, b: V1Service): number {
  const ca = createdOf(a);
  const cb = createdOf(b);
  if (ca !== cb) return ca === '' ? 1 : cb === '' ? -1 : compareStrings(ca, cb);
  return compareStrings(nameKey(a), nameKey(b)) || compareStrings(stableStringify(a), stableStringify(b));
}

/** isTunaLoadBalancer says whether tuna is the load balancer of this Service. */
export function isTunaLoadBalancer(svc: V1Service, options: TranslateOptions): boolean {
  return svc.spec?.type === 'LoadBalancer' && svc.spec.loadBalancerClass === options.loadBalancerClass;
}
