import { expect } from 'chai';
import { translateObjects } from '../../src/agent/state.js';
import type { AgentState } from '../../src/agent/state.js';
import { challengeName } from '../../src/edge/control/index.js';
import type { ObjectStatus } from '../../src/model/index.js';
import { challengeRecordName } from '../../src/operator/edge-reconciler.js';
import type { PendingBinding } from '../../src/operator/edge-reconciler.js';
import { correctHeldBack } from '../../src/operator/held-back.js';

const GW = 'gateway.networking.k8s.io';
const created = '2026-01-01T00:00:00Z';
const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: created });
const backend = { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'shop'), spec: { ports: [{ name: 'http', port: 80 }] } };

type Cond = { type: string; status: string; reason: string; message: string };
const find = (state: AgentState | ObjectStatus[], kind: string, name: string): ObjectStatus => {
  const list = Array.isArray(state) ? state : state.statuses;
  const s = list.find((x) => x.ref.kind === kind && x.ref.name === name);
  if (!s) throw new Error(`no status for ${kind} ${name}`);
  return s;
};
const conditionOf = (list: unknown, type: string): Cond | undefined => (list as Cond[] | undefined)?.find((c) => c.type === type);

describe('operator: statuses say only what the edge serves (held-back bindings)', () => {
  it('turns a Gateway whose address is held back into Programmed=False AddressNotAssigned, with one Warning event', () => {
    const state = translateObjects([
      backend,
      { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
      { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'shop'), spec: { gatewayClassName: 'tuna', listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
      {
        apiVersion: `${GW}/v1`,
        kind: 'HTTPRoute',
        metadata: meta('route', 'shop'),
        spec: { parentRefs: [{ name: 'gw' }], hostnames: ['app.shop.test'], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
    ]);
    const before = find(state, 'Gateway', 'gw');
    expect(conditionOf(before.status?.conditions, 'Programmed')?.status, 'the translator vouches for its part').to.equal('True');
    const message = 'the edge has assigned no address: it refused to reserve one from its pool: no free address';
    const pending: PendingBinding[] = [{ bindingId: 'binding/address/shop/gw', reason: 'AddressNotAssigned', message }];

    const corrected = correctHeldBack(state.statuses, state.graph, pending);
    const gw = find(corrected, 'Gateway', 'gw');
    expect(conditionOf(gw.status?.conditions, 'Programmed')).to.deep.include({ status: 'False', reason: 'AddressNotAssigned', message });
    expect(conditionOf(gw.status?.conditions, 'Accepted')?.status, 'Accepted is the translator’s and stays').to.equal('True');
    const listeners = gw.status?.listeners as { name: string; conditions: Cond[] }[];
    expect(conditionOf(listeners[0]?.conditions, 'Programmed')).to.deep.include({ status: 'False', reason: 'Pending' });
    expect(gw.status?.addresses).to.deep.equal([]);
    expect(gw.events).to.deep.equal([{ type: 'Warning', reason: 'AddressNotAssigned', message }]);
    expect(conditionOf(before.status?.conditions, 'Programmed')?.status, 'the input is not modified').to.equal('True');
  });

  it('turns a ListenerSet served on a held-back Gateway address into Programmed=False ParentNotProgrammed, its listeners Pending', () => {
    const objects = [
      backend,
      { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
      {
        apiVersion: `${GW}/v1`,
        kind: 'Gateway',
        metadata: meta('gw', 'shop'),
        spec: { gatewayClassName: 'tuna', allowedListeners: { namespaces: { from: 'Same' } }, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] },
      },
      { apiVersion: `${GW}/v1`, kind: 'ListenerSet', metadata: meta('extra', 'shop'), spec: { parentRef: { name: 'gw' }, listeners: [{ name: 'more', protocol: 'HTTP', port: 80, hostname: 'more.shop.test' }] } },
    ];
    const state = translateObjects(objects);
    expect(conditionOf(find(state, 'ListenerSet', 'extra').status?.conditions, 'Programmed')?.status, 'the translator vouches for its part').to.equal('True');
    const pending: PendingBinding[] = [{ bindingId: 'binding/address/shop/gw', reason: 'AddressNotAssigned', message: 'no free address' }];

    const set = find(correctHeldBack(state.statuses, state.graph, pending), 'ListenerSet', 'extra');
    expect(conditionOf(set.status?.conditions, 'Programmed')).to.deep.include({ status: 'False', reason: 'ParentNotProgrammed' });
    expect(conditionOf(set.status?.conditions, 'Accepted')?.status, 'Accepted is the translator’s and stays').to.equal('True');
    const listeners = set.status?.listeners as { conditions: Cond[] }[];
    expect(conditionOf(listeners[0]?.conditions, 'Programmed')).to.deep.include({ status: 'False', reason: 'Pending' });
    expect(set.events.map((e) => e.reason)).to.deep.equal(['ParentNotProgrammed']);
    const served = find(correctHeldBack(state.statuses, state.graph, []), 'ListenerSet', 'extra');
    expect(conditionOf(served.status?.conditions, 'Programmed')?.status, 'a served address changes nothing').to.equal('True');
  });

  it('lists the address the edge assigned in a served Gateway’s status.addresses, Programmed=True', () => {
    const state = translateObjects([
      backend,
      { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
      { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'shop'), spec: { gatewayClassName: 'tuna', listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
    ]);
    const corrected = correctHeldBack(state.statuses, state.graph, [], new Map([['binding/address/shop/gw', '127.77.0.4']]));
    const gw = find(corrected, 'Gateway', 'gw');
    expect(gw.status?.addresses).to.deep.equal([{ type: 'IPAddress', value: '127.77.0.4' }]);
    expect(conditionOf(gw.status?.conditions, 'Programmed')?.status).to.equal('True');
    expect(gw.events).to.deep.equal([]);
    expect(find(state, 'Gateway', 'gw').status?.addresses, 'the input is not modified').to.equal(undefined);
  });

  it('takes a held-back TCP port out of a Service’s status.loadBalancer and says why in status.conditions', () => {
    const state = translateObjects([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta('db', 'shop'),
        spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'pg', port: 5432 }, { name: 'http', port: 8080, appProtocol: 'http' }] },
      },
    ]);
    const lbBefore = find(state, 'Service', 'db').status?.loadBalancer;
    expect(JSON.stringify(lbBefore), 'the translator lists the TCP port').to.include('5432');
    const message = 'TCP port 5432 is not served: the edge has no TCP port pool';
    const pending: PendingBinding[] = [{ bindingId: 'binding/tcp-port/shop/db/5432', reason: 'PortNotAssigned', message }];

    const svc = find(correctHeldBack(state.statuses, state.graph, pending), 'Service', 'db');
    expect(svc.status?.loadBalancer).to.deep.equal({ ingress: [{ hostname: 'db-shop.tuna.example', ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }] }] });
    expect(conditionOf(svc.status?.conditions, 'Published')).to.deep.include({ status: 'True', reason: 'PartiallyPublished', message });
    expect(svc.events.filter((e) => e.reason === 'PortNotAssigned')).to.deep.equal([{ type: 'Warning', reason: 'PortNotAssigned', message }]);
  });

  it('leaves a Service with only a held-back TCP port no ingress entry, Published=False', () => {
    const state = translateObjects([
      { apiVersion: 'v1', kind: 'Service', metadata: meta('db', 'shop'), spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'pg', port: 5432 }] } },
    ]);
    const message = 'TCP port 5432 is not served: the edge has no TCP port pool';
    const svc = find(correctHeldBack(state.statuses, state.graph, [{ bindingId: 'binding/tcp-port/shop/db/5432', reason: 'PortNotAssigned', message }]), 'Service', 'db');
    expect(svc.status?.loadBalancer).to.deep.equal({});
    expect(conditionOf(svc.status?.conditions, 'Published')).to.deep.include({ status: 'False', reason: 'PortNotAssigned', message });
  });

  it('gives a served Service its Published=True condition in status.conditions, so a fixed problem does not linger', () => {
    const state = translateObjects([
      { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'shop'), spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'http', port: 8080, appProtocol: 'http' }] } },
    ]);
    const svc = find(correctHeldBack(state.statuses, state.graph, []), 'Service', 'web');
    expect(conditionOf(svc.status?.conditions, 'Published')).to.deep.include({ status: 'True', reason: 'Published' });
    expect(svc.status?.loadBalancer).to.deep.equal(find(state, 'Service', 'web').status?.loadBalancer);
  });

  it('advertises no unverified custom domain: the Ingress loses its entry, the Domain shows the TXT record to create', () => {
    const host = 'shop.example.com';
    const state = translateObjects([
      backend,
      { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: meta('tuna'), spec: { controller: 'tuna.dev/ingress-controller' } },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: meta('web', 'shop'),
        spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      },
      { apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: meta('shop', 'shop'), spec: { customDomain: host } },
    ]);
    expect(find(state, 'Ingress', 'web').status?.loadBalancer, 'the translator advertises it').to.deep.equal({ ingress: [{ hostname: host }] });
    const txtRecord = { name: challengeRecordName(host), value: 'tok-123' };
    const message = `${host} is not served yet: the edge serves a custom domain once it is verified. Create the DNS TXT record ${txtRecord.name} with the value ${txtRecord.value}, then run tuna reserve verify ${host}`;
    const pending: PendingBinding[] = [{ bindingId: `binding/host/${host}`, reason: 'DomainNotVerified', message, txtRecord }];

    const corrected = correctHeldBack(state.statuses, state.graph, pending);
    const ingress = find(corrected, 'Ingress', 'web');
    expect(ingress.status?.loadBalancer).to.deep.equal({});
    expect(conditionOf(ingress.conditions, 'Published')).to.deep.include({ status: 'False', reason: 'DomainNotVerified', message });
    expect(ingress.events.filter((e) => e.reason === 'DomainNotVerified')).to.deep.equal([{ type: 'Warning', reason: 'DomainNotVerified', message }]);
    const domain = find(corrected, 'Domain', 'shop');
    expect(domain.status?.verification).to.deep.equal({ type: 'TXT', name: '_tuna-challenge.shop.example.com', value: 'tok-123' });
    expect(conditionOf(domain.status?.conditions, 'Reserved')).to.deep.include({ status: 'Unknown', reason: 'DomainNotVerified', message });
    expect(conditionOf(domain.status?.conditions, 'Ready')).to.deep.include({ status: 'False', reason: 'DomainNotVerified', message });
    expect(domain.events.filter((e) => e.type === 'Warning')).to.deep.equal([{ type: 'Warning', reason: 'DomainNotVerified', message }]);
  });

  it('takes the url of a held-back Tunnel away and turns Ready False', () => {
    const state = translateObjects([
      { ...backend, spec: { ports: [{ name: 'http', port: 80 }] } },
      { apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: meta('shop', 'shop'), spec: { customDomain: 'shop.example.com' } },
      { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: meta('front', 'shop'), spec: { protocol: 'http', domainRef: { name: 'shop' }, service: { name: 'web', port: 'http' } } },
    ]);
    expect(find(state, 'Tunnel', 'front').status?.url).to.equal('https://shop.example.com');
    const message = 'shop.example.com is not served: the edge refused to reserve it: the hostname is held by another account';
    const tunnel = find(correctHeldBack(state.statuses, state.graph, [{ bindingId: 'binding/host/shop.example.com', reason: 'EdgeRefused', message }]), 'Tunnel', 'front');
    expect(tunnel.status?.url).to.equal(undefined);
    expect(conditionOf(tunnel.status?.conditions, 'Ready')).to.deep.include({ status: 'False', reason: 'EdgeRefused', message });
    expect(tunnel.events.filter((e) => e.type === 'Warning')).to.deep.equal([{ type: 'Warning', reason: 'EdgeRefused', message }]);
  });

  it('clones only the statuses it changes: the others are returned as given, and the input is not modified', () => {
    const ingress = (name: string, host: string) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta(name, 'shop'),
      spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    });
    const names = ['a', 'b', 'c', 'd', 'e'];
    const state = translateObjects([
      backend,
      { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: meta('tuna'), spec: { controller: 'tuna.dev/ingress-controller' } },
      ...names.map((n) => ingress(n, `${n}.shop.example.com`)),
    ]);
    const snapshot = JSON.stringify(state.statuses);
    const message = 'c.shop.example.com is not served: the edge refused to reserve it: the hostname is held by another account';
    const corrected = correctHeldBack(state.statuses, state.graph, [{ bindingId: 'binding/host/c.shop.example.com', reason: 'EdgeRefused', message }]);
    for (const n of ['a', 'b', 'd', 'e']) expect(find(corrected, 'Ingress', n), `Ingress ${n} is untouched`).to.equal(find(state, 'Ingress', n));
    const c = find(corrected, 'Ingress', 'c');
    expect(c).to.not.equal(find(state, 'Ingress', 'c'));
    expect(c.status?.loadBalancer).to.deep.equal({});
    expect(conditionOf(c.conditions, 'Published')).to.deep.include({ status: 'False', reason: 'EdgeRefused' });
    expect(JSON.stringify(state.statuses), 'the input is not modified').to.equal(snapshot);
    expect(corrected).to.have.length(state.statuses.length);
  });

  it('names the TXT record exactly as the edge checks it', () => {
    expect(challengeRecordName('shop.example.com')).to.equal(challengeName('shop.example.com'));
  });
});
