/**
 * ListenerSet (Gateway API v1.6, GEP-1713) statuses the golden files do not show: the Gateway's
 * `status.attachedListenerSets` falling back to 0, a set whose Gateway is not accepted, and a
 * malformed set. The golden files under test/golden/gateway/listenerset-* hold the rest.
 */
import { expect } from 'chai';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';

const GW = 'gateway.networking.k8s.io/v1';
const gatewayClass = { apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna' }, spec: { controllerName: 'tuna.dev/gateway-controller' } };
const http = (name: string, hostname: string) => ({ name, port: 80, protocol: 'HTTP', hostname });

function gateway(spec: Record<string, unknown>, status?: Record<string, unknown>) {
  return { apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra', generation: 1 }, spec: { gatewayClassName: 'tuna', ...spec }, ...(status ? { status } : {}) };
}

function listenerSet(name: string, spec: unknown) {
  return { apiVersion: GW, kind: 'ListenerSet', metadata: { name, namespace: 'infra', generation: 4 }, spec };
}

interface Cond {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
}

function statusOf(objects: unknown[], kind: string, name = 'gw'): Record<string, unknown> | undefined {
  const result = translateSnapshot(snapshotFromObjects([gatewayClass, ...objects]).snapshot);
  return result.statuses.find((s) => s.ref.kind === kind && s.ref.name === name)?.status;
}

function conditionsOf(status: Record<string, unknown> | undefined): Cond[] {
  return (status?.conditions ?? []) as Cond[];
}

describe('ListenerSet translation', () => {
  it('writes attachedListenerSets 0 on a Gateway whose status still counts ListenerSets that are gone', () => {
    const status = statusOf([gateway({ listeners: [http('main', 'gw.example.com')] }, { attachedListenerSets: 2 })], 'Gateway');
    expect(status).to.have.property('attachedListenerSets', 0);
  });

  it('leaves attachedListenerSets out on a Gateway that never had ListenerSets', () => {
    const status = statusOf([gateway({ listeners: [http('main', 'gw.example.com')] })], 'Gateway');
    expect(status).to.not.have.property('attachedListenerSets');
  });

  it('refuses a ListenerSet whose Gateway is not accepted with reason ParentNotAccepted, and serves none of it', () => {
    const objects = [
      gateway({ allowedListeners: { namespaces: { from: 'All' } }, listeners: [{ name: 'sctp', port: 53, protocol: 'SCTP' }] }),
      listenerSet('extra', { parentRef: { name: 'gw' }, listeners: [http('extra', 'extra.example.com')] }),
    ];
    const status = statusOf(objects, 'ListenerSet', 'extra');
    expect(conditionsOf(status).map((c) => [c.type, c.status, c.reason])).to.deep.equal([
      ['Accepted', 'False', 'ParentNotAccepted'],
      ['Programmed', 'False', 'ParentNotAccepted'],
    ]);
    expect(conditionsOf(status)[0]?.observedGeneration).to.equal(4);
    const graph = translateSnapshot(snapshotFromObjects([gatewayClass, ...objects]).snapshot).graph;
    expect(graph.listeners).to.deep.equal([]);
    expect(statusOf(objects, 'Gateway')).to.have.property('attachedListenerSets', 0);
  });

  it('refuses a malformed ListenerSet with reason Invalid naming the field', () => {
    const objects = [
      gateway({ allowedListeners: { namespaces: { from: 'Same' } }, listeners: [http('main', 'gw.example.com')] }),
      listenerSet('bad', { parentRef: { name: 'gw' }, listeners: [{ name: 'x', port: 'eighty', protocol: 'HTTP' }] }),
    ];
    const status = statusOf(objects, 'ListenerSet', 'bad');
    const accepted = conditionsOf(status)[0] as Cond & { message: string };
    expect(accepted).to.include({ type: 'Accepted', status: 'False', reason: 'Invalid' });
    expect(accepted.message).to.contain('spec.listeners[0].port');
    expect(statusOf(objects, 'Gateway')).to.have.property('attachedListenerSets', 0);
  });

  it('orders ListenerSets without a creation time after those with one, so the dated one wins a shared hostname', () => {
    const dated = { ...listenerSet('zz-dated', { parentRef: { name: 'gw' }, listeners: [http('a', 'shared.example.com')] }) };
    dated.metadata = { ...dated.metadata, creationTimestamp: '2026-01-01T00:00:00Z' } as typeof dated.metadata;
    const objects = [
      gateway({ allowedListeners: { namespaces: { from: 'Same' } }, listeners: [http('main', 'gw.example.com')] }),
      listenerSet('aa-undated', { parentRef: { name: 'gw' }, listeners: [http('a', 'shared.example.com')] }),
      dated,
    ];
    expect(conditionsOf(statusOf(objects, 'ListenerSet', 'zz-dated'))[0]).to.include({ status: 'True' });
    expect(conditionsOf(statusOf(objects, 'ListenerSet', 'aa-undated'))[0]).to.include({ status: 'False', reason: 'ListenersNotValid' });
  });
});
