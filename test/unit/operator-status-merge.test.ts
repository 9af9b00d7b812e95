import { expect } from 'chai';
import { mergePatchOf, mergeStatus, rfc3339Seconds, sameJson, statusDiffers } from '../../src/operator/status-merge.js';

const ours = 'tuna.dev/gateway-controller';
const T0 = '2026-11-01T10:00:00Z';
const NOW = '2026-11-29T18:00:00Z';
const accepted = (status: 'True' | 'False', reason = status === 'True' ? 'Accepted' : 'NotAllowedByListeners') => ({ type: 'Accepted', status, reason, message: '', observedGeneration: 2 });

describe('operator: status merge', () => {
  it('stamps new conditions with now and keeps the time of those whose status held', () => {
    const current = { conditions: [{ ...accepted('True'), lastTransitionTime: T0 }, { type: 'Programmed', status: 'False', reason: 'Pending', message: '', lastTransitionTime: T0 }] };
    const desired = { conditions: [accepted('True'), { type: 'Programmed', status: 'True', reason: 'Programmed', message: '' }, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs', message: '' }] };
    const merged = mergeStatus(current, desired, { controllerName: ours, now: NOW });
    expect((merged.conditions as { type: string; lastTransitionTime: string }[]).map((c) => [c.type, c.lastTransitionTime])).to.deep.equal([
      ['Accepted', T0],
      ['Programmed', NOW],
      ['ResolvedRefs', NOW],
    ]);
  });

  it('stamps RoutePolicy ancestors[] conditions, matched by ancestorRef and controllerName', () => {
    const held = { ancestorRef: { kind: 'HTTPRoute', name: 'a' }, controllerName: ours, conditions: [{ ...accepted('True'), lastTransitionTime: T0 }] };
    const desired = {
      ancestors: [
        { ancestorRef: { kind: 'HTTPRoute', name: 'a' }, controllerName: ours, conditions: [accepted('True')] },
        { ancestorRef: { kind: 'Ingress', name: 'a' }, controllerName: ours, conditions: [accepted('True')] },
      ],
    };
    const merged = mergeStatus({ ancestors: [held] }, desired, { controllerName: ours, now: NOW }) as { ancestors: { ancestorRef: { kind: string }; conditions: { lastTransitionTime: string }[] }[] };
    expect(merged.ancestors.map((a) => [a.ancestorRef.kind, a.conditions[0]?.lastTransitionTime])).to.deep.equal([
      ['HTTPRoute', T0],
      ['Ingress', NOW],
    ]);
  });

  it('keeps the BackendTLSPolicy ancestors[] of other controllers ahead of tuna\'s, untouched', () => {
    const theirs = { ancestorRef: { kind: 'Gateway', name: 'gw' }, controllerName: 'example.com/other', conditions: [{ ...accepted('False', 'Conflicted'), lastTransitionTime: T0 }] };
    const stale = { ancestorRef: { kind: 'Gateway', name: 'gone' }, controllerName: ours, conditions: [{ ...accepted('True'), lastTransitionTime: T0 }] };
    const desired = { ancestors: [{ ancestorRef: { kind: 'Gateway', name: 'gw' }, controllerName: ours, conditions: [accepted('True')] }] };
    const merged = mergeStatus({ ancestors: [theirs, stale] }, desired, { controllerName: ours, now: NOW }) as { ancestors: { controllerName: string; ancestorRef: { name: string } }[] };
    expect(merged.ancestors.map((a) => [a.controllerName, a.ancestorRef.name])).to.deep.equal([
      ['example.com/other', 'gw'],
      [ours, 'gw'],
    ]);
    expect(merged.ancestors[0]).to.deep.equal(theirs);
  });

  it('matches listener conditions by listener name', () => {
    const current = { listeners: [{ name: 'web', attachedRoutes: 1, conditions: [{ ...accepted('True'), lastTransitionTime: T0 }] }] };
    const desired = { listeners: [{ name: 'api', attachedRoutes: 0, conditions: [accepted('True')] }, { name: 'web', attachedRoutes: 2, conditions: [accepted('True')] }] };
    const merged = mergeStatus(current, desired, { controllerName: ours, now: NOW }) as { listeners: { name: string; conditions: { lastTransitionTime: string }[] }[] };
    expect(merged.listeners.map((l) => [l.name, l.conditions[0]?.lastTransitionTime])).to.deep.equal([
      ['api', NOW],
      ['web', T0],
    ]);
  });

  it("keeps other controllers' route parents and replaces only tuna's, matched by parentRef", () => {
    const theirs = { parentRef: { name: 'other-gw' }, controllerName: 'example.com/other', conditions: [{ ...accepted('True'), lastTransitionTime: T0 }] };
    const stale = { parentRef: { name: 'gone', sectionName: 'web' }, controllerName: ours, conditions: [{ ...accepted('True'), lastTransitionTime: T0 }] };
    const held = { parentRef: { name: 'gw', sectionName: 'web' }, controllerName: ours, conditions: [{ ...accepted('False'), lastTransitionTime: T0 }] };
    const desired = { parents: [{ parentRef: { sectionName: 'web', name: 'gw' }, controllerName: ours, conditions: [accepted('False')] }] };
    const merged = mergeStatus({ parents: [theirs, stale, held] }, desired, { controllerName: ours, now: NOW }) as { parents: { controllerName: string; parentRef: { name: string }; conditions: { lastTransitionTime: string }[] }[] };
    expect(merged.parents.map((p) => [p.controllerName, p.parentRef.name, p.conditions[0]?.lastTransitionTime])).to.deep.equal([
      ['example.com/other', 'other-gw', T0],
      [ours, 'gw', T0],
    ]);
  });

  it('says nothing changed when a rewrite would write what is there, Dates from the client library included', () => {
    const current = { loadBalancer: { ingress: [{ hostname: 'a.example.com' }] }, conditions: [{ ...accepted('True'), lastTransitionTime: new Date(T0) }], untouched: 'by others' };
    const merged = mergeStatus(current, { conditions: [accepted('True')], loadBalancer: { ingress: [{ hostname: 'a.example.com' }] } }, { controllerName: ours, now: NOW });
    expect(statusDiffers(current, merged)).to.equal(false);
    const moved = mergeStatus(current, { conditions: [accepted('True')], loadBalancer: { ingress: [{ hostname: 'b.example.com' }] } }, { controllerName: ours, now: NOW });
    expect(statusDiffers(current, moved)).to.equal(true);
    expect(statusDiffers(undefined, moved)).to.equal(true);
  });

  it('formats times as the API server stores them and compares JSON regardless of key order', () => {
    expect(rfc3339Seconds(new Date('2026-11-29T18:00:00.789Z'))).to.equal('2026-11-29T18:00:00Z');
    expect(sameJson({ a: 1, b: [{ c: 2, d: 3 }] }, { b: [{ d: 3, c: 2 }], a: 1 })).to.equal(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).to.equal(false);
  });
  it('deletes in the merge patch what a nested object no longer has, so loadBalancer {} clears old ingress entries', () => {
    const current = { loadBalancer: { ingress: [{ hostname: 'old.example.com' }] }, conditions: [{ type: 'Published' }], theirs: { a: 1 } };
    const merged = { loadBalancer: {}, conditions: [] };
    expect(mergePatchOf(current, merged)).to.deep.equal({ loadBalancer: { ingress: null }, conditions: [] });
    expect(statusDiffers(current, merged)).to.equal(true);
    expect(statusDiffers({ loadBalancer: {} }, merged), 'written once, the same afterwards (the API omits an empty list)').to.equal(false);
  });

  it('treats a null (a merge patch delete) as equal to an absent field', () => {
    expect(statusDiffers({ hostname: 'a' }, { hostname: 'a', url: null })).to.equal(false);
    expect(statusDiffers({ hostname: 'a', url: 'https://a' }, { hostname: 'a', url: null })).to.equal(true);
    expect(mergePatchOf({ url: 'https://a' }, { url: null })).to.deep.equal({ url: null });
  });
});
