/**
 * The LoadBalancer Service translator: a Service of `type: LoadBalancer` with
 * `spec.loadBalancerClass: tuna` gets a TCP port on the edge for each TCP port, or an HTTP hostname
 * for ports whose appProtocol is http, kubernetes.io/h2c or kubernetes.io/ws. Each Service is a
 * fragment group of its own. See docs/translators/service.md.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { StatusBook } from '../common/meta.js';
import type { TranslateOptions, TranslatorOutput } from '../types.js';
import { translateService } from './translate-service.js';

/**
 * translateLoadBalancerServices translates every tuna LoadBalancer Service. A Service of another
 * class, or of class tuna but not of type LoadBalancer, is ignored silently (no status), as the
 * Kubernetes API only honours loadBalancerClass on LoadBalancer Services.
 */
export function translateLoadBalancerServices(index: SnapshotIndex, options: TranslateOptions): TranslatorOutput {
  const book = new StatusBook();
  const fragments = [];
  for (const svc of index.snapshot.services) if (isTunaLoadBalancer(svc, options)) fragments.push(translateService(svc, index, options, book));
  return { fragments, statuses: book.all() };
}

/** isTunaLoadBalancer says whether tuna is the load balancer of this Service. */
export function isTunaLoadBalancer(svc: V1Service, options: TranslateOptions): boolean {
  return svc.spec?.type === 'LoadBalancer' && svc.spec.loadBalancerClass === options.loadBalancerClass;
}
