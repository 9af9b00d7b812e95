import type { IReferenceGrant } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ReferenceGrant';
import { namespaceOf } from '../common/meta.js';
import { asKube } from './kube-object.js';
import { malformedField, referenceGrantCodec } from './codecs.js';
import type { KindName } from '../kinds.js';

/** ReferenceTarget is the object a cross-namespace reference points at. */
export interface ReferenceTarget {
  group: string;
  kind: KindName;
  namespace: string;
  name: string;
}

/** ReferenceSource is the object holding a cross-namespace reference. */
export interface ReferenceSource {
  group: string;
  kind: KindName;
  namespace: string;
}

/**
 * ReferenceGrants answers "may this object reference that one?" (Gateway API ReferenceGrant, v1 and
 * v1beta1 alike). A grant lives in the target's namespace; it permits a reference when one `from`
 * entry matches the source's group, kind and namespace and one `to` entry matches the target's
 * group and kind and, when it names one, the target's name. Same-namespace references need no grant.
 */
export class ReferenceGrants {
  private readonly byNamespace = new Map<string, IReferenceGrant[]>();

  /** constructor indexes the grants by their namespace. */
  constructor(grants: IReferenceGrant[]) {
    for (const g of grants) {
      if (malformedField(referenceGrantCodec, g)) continue; // a malformed grant grants nothing
      const ns = namespaceOf(asKube(g));
      const list = this.byNamespace.get(ns) ?? [];
      list.push(g);
      this.byNamespace.set(ns, list);
    }
  }

  /** isPermitted says whether `from` may reference `to`. */
  isPermitted(from: ReferenceSource, to: ReferenceTarget): boolean {
    if (from.namespace === to.namespace) return true;
    for (const g of this.byNamespace.get(to.namespace) ?? []) {
      const fromOk = (g.spec?.from ?? []).some(
        (f) => (f.group ?? '') === from.group && f.kind === from.kind && f.namespace === from.namespace,
      );
      if (!fromOk) continue;
      const toOk = (g.spec?.to ?? []).some(
        (t) => (t.group ?? '') === to.group && t.kind === to.kind && (t.name === undefined || t.name === '' || t.name === to.name),
      );
      if (toOk) return true;
    }
    return false;
  }
}
