/**
 * Kind names typed from the table of kinds (src/translate/kinds.ts): the helpers that compare a
 * kind take a kind of the table, so a misspelt kind does not compile, and the kinds that carry the
 * reservation finalizer are the rows marked `finalized`.
 */
import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from '../../src/model/index.js';
import { splitDeleting } from '../../src/operator/index.js';
import { FINALIZED_KINDS, KINDS, isFinalizedKind, isGroupKind, isKind, refersTo } from '../../src/translate/index.js';
import type { CrdKind, FinalizedKind, HttpRouteKind, KindName, RouteKind, StreamRouteKind } from '../../src/translate/index.js';

/**
 * misspeltKinds holds one misspelt kind per helper and union; never called, only compiled. Each
 * `@ts-expect-error` is checked by `npm run typecheck` (and lint): were a parameter or a union
 * widened to `string`, the line would compile and tsc would fail on the unused directive.
 */
export function misspeltKinds(ref: ObjectRef): void {
  // @ts-expect-error 'HTTPRoutes' is not a kind of the table
  isKind(ref, 'HTTPRoutes');
  // @ts-expect-error 'Gateways' is not a kind of the table
  isGroupKind(ref, 'Gateways');
  // @ts-expect-error kinds are case-sensitive: 'secret' is not 'Secret'
  refersTo(ref, 'secret');
  // @ts-expect-error 'TLSroute' is not a kind of the table
  const _kind: KindName = 'TLSroute';
  // @ts-expect-error a Gateway is no route kind
  const _route: RouteKind = 'Gateway';
  // @ts-expect-error TCPRoute is served as a stream, not matched per request
  const _http: HttpRouteKind = 'TCPRoute';
  // @ts-expect-error HTTPRoute is matched per request, not served as a stream
  const _stream: StreamRouteKind = 'HTTPRoute';
  // @ts-expect-error a Service is no tuna.dev kind
  const _crd: CrdKind = 'Service';
  // @ts-expect-error RoutePolicy carries no finalizer
  const _finalized: FinalizedKind = 'RoutePolicy';
  // narrowing: a ref that isKind 'Domain' has kind 'Domain'
  if (isKind(ref, 'Domain')) {
    // @ts-expect-error a Domain's kind is not 'Tunnel'
    const _tunnel: 'Tunnel' = ref.kind;
  }
}

const deleting = (kind: string, group: string): KubernetesObject =>
  ({ apiVersion: `${group ? `${group}/` : ''}v1`, kind, metadata: { name: 'x', namespace: 'shop', uid: `uid-${kind}`, deletionTimestamp: '2026-01-02T00:00:00Z' }, spec: {} }) as unknown as KubernetesObject;

describe('kind names typed from the table of kinds', () => {
  it('finalizes exactly the rows marked finalized: Domain, TCPPort and Tunnel', () => {
    const marked = KINDS.filter((k) => 'finalized' in k && k.finalized).map((k) => k.kind);
    expect(FINALIZED_KINDS.map((k) => k.kind)).to.deep.equal(marked);
    expect(marked).to.deep.equal(['Domain', 'TCPPort', 'Tunnel']);
    for (const k of KINDS) expect(isFinalizedKind(k.kind), k.kind).to.equal(marked.includes(k.kind));
  });

  it('holds back for its finalizer a deleted object of every finalized tuna.dev row, and of no other row', () => {
    const objects = KINDS.map((k) => deleting(k.kind, k.group === 'tuna.dev' ? 'tuna.dev' : k.group));
    const { live, deleting: held } = splitDeleting(objects);
    expect(held.map((d) => d.ref.kind)).to.deep.equal(FINALIZED_KINDS.map((k) => k.kind));
    expect(live.map((o) => o.kind)).to.deep.equal(KINDS.filter((k) => !isFinalizedKind(k.kind)).map((k) => k.kind));
  });

  const cases: { what: string; got: boolean; want: boolean }[] = [
    { what: 'isKind compares the kind alone', got: isKind({ group: 'other.example', kind: 'Gateway' }, 'Gateway'), want: true },
    { what: 'isKind refuses another kind', got: isKind({ kind: 'ListenerSet' }, 'Gateway'), want: false },
    { what: 'isKind refuses no ref', got: isKind(undefined, 'Gateway'), want: false },
    { what: 'isGroupKind takes the row’s group', got: isGroupKind({ group: 'gateway.networking.k8s.io', kind: 'Gateway' }, 'Gateway'), want: true },
    { what: 'isGroupKind refuses another group', got: isGroupKind({ group: 'other.example', kind: 'Gateway' }, 'Gateway'), want: false },
    { what: 'isGroupKind reads an absent group as the core group', got: isGroupKind({ kind: 'Service' }, 'Service'), want: true },
    { what: 'refersTo gives an empty reference the row’s group and kind', got: refersTo({}, 'Gateway'), want: true },
    { what: 'refersTo refuses a Gateway reference of another group', got: refersTo({ group: 'other.example' }, 'Gateway'), want: false },
    { what: 'refersTo refuses a ConfigMap where a Secret is wanted', got: refersTo({ kind: 'ConfigMap' }, 'Secret'), want: false },
    { what: 'refersTo takes a core Secret named in full', got: refersTo({ group: '', kind: 'Secret' }, 'Secret'), want: true },
  ];
  for (const c of cases) it(`${c.what}`, () => expect(c.got).to.equal(c.want));
});
