import type { KubernetesObject } from '@kubernetes/client-node';
import { isGroupKind } from '../translate/index.js';

/** the groups whose kinds bump `metadata.generation` on every change of their spec (CRDs with a status subresource) */
const GENERATION_GROUPS: ReadonlySet<string> = new Set(['gateway.networking.k8s.io', 'tuna.dev']);

/**
 * tracksSpecInGeneration tells whether an update that keeps a kind's `metadata.generation` changed
 * its status only: true for Ingress (the apiserver bumps it on a spec change) and for the Gateway
 * API and tuna.dev CRDs (status subresources). Not for Service, EndpointSlice or the rest, whose
 * every update is taken as a change.
 */
export function tracksSpecInGeneration(kind: { group: string; kind: string }): boolean {
  return GENERATION_GROUPS.has(kind.group) || isGroupKind(kind, 'Ingress');
}

/**
 * SpecChanges tells a watch event that changes what the translators read from one that does not
 * (as controller-runtime's GenerationChangedPredicate does, plus labels, annotations, finalizers
 * and deletion, which tuna reads too). Without it, every status tuna wrote came back as a watch
 * update and caused a full sync of the cluster, so a batch of N Ingresses cost N more syncs.
 */
export class SpecChanges {
  /** what each object of a generation-tracking kind looked like to the translators, by kind/namespace/name */
  readonly #seen = new Map<string, string>();

  /** isChange records the event and tells whether it changed anything the translators read. */
  isChange(kind: { group: string; kind: string; plural: string }, verb: 'add' | 'update' | 'delete', obj: KubernetesObject): boolean {
    if (!tracksSpecInGeneration(kind)) return true;
    const key = `${kind.plural}.${kind.group}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    if (verb === 'delete') {
      this.#seen.delete(key);
      return true;
    }
    const m = obj.metadata ?? {};
    const signature = m.generation === undefined ? undefined : JSON.stringify([m.generation, m.labels ?? {}, m.annotations ?? {}, m.deletionTimestamp ?? null, m.finalizers ?? []]);
    const before = this.#seen.get(key);
    if (signature === undefined) {
      this.#seen.delete(key);
      return true;
    }
    this.#seen.set(key, signature);
    return verb === 'add' || before !== signature;
  }
}
