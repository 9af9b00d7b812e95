/**
 * The tuna.dev CRDs' reservations at the edge, against a fake control API that
 * reserves and adopts as the edge's store does: Domains and TCPPorts are reserved and labelled,
 * found again by a restarted reconciler, adopted when the account already holds them, reserved
 * again after an out-of-band release (or held back when the name was taken meanwhile), released
 * or retained as `reclaimPolicy` says, and their statuses say what the edge holds.
 */
import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { translateObjects } from '../../src/agent/state.js';
import type { Condition, ObjectStatus, RouteGraph } from '../../src/model/index.js';
import { EdgeReconciler, OWNER_LABEL, RECLAIM_LABEL, RETAINED_LABEL, TunnelKeys, correctHeldBack, correctReservationStatuses, splitDeleting } from '../../src/operator/index.js';
import type { KnowsOwnerGone, ReconcileReport } from '../../src/operator/index.js';
import { FakeReservingEdge } from '../support/fake-reserving-edge.js';

const BASE = 'tuna.example.com';
const CLUSTER = { 'tuna.dev/cluster': 'c1' };
const created = '2026-01-01T00:00:00Z';

const domain = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubernetesObject =>
  ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: { name, namespace: 'shop', uid: `uid-${name}`, creationTimestamp: created, generation: 1, ...extra }, spec }) as unknown as KubernetesObject;
const tcpPort = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubernetesObject =>
  ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'TCPPort', metadata: { name, namespace: 'shop', uid: `uid-${name}`, creationTimestamp: created, generation: 1, ...extra }, spec }) as unknown as KubernetesObject;

/** sync translates the objects as the operator does (objects being deleted left out) and reconciles once. */
async function sync(reconciler: EdgeReconciler, objects: KubernetesObject[], knowsOwnerGone?: KnowsOwnerGone): Promise<{ report: ReconcileReport; statuses: ObjectStatus[]; graph: RouteGraph }> {
  const { live, deleting } = splitDeleting(objects);
  const state = translateObjects(live, { baseDomain: BASE });
  const report = await reconciler.reconcile(state.graph, knowsOwnerGone, { releasing: deleting });
  return { report, statuses: correctReservationStatuses(state.statuses, report.crd), graph: state.graph };
}

const reconcilerOf = (edge: FakeReservingEdge, keys = new TunnelKeys()): EdgeReconciler => new EdgeReconciler(edge, keys, { clusterId: 'c1', resyncMs: 0 });

function conditionOf(statuses: ObjectStatus[], name: string, type: string): Condition | undefined {
  const body = statuses.find((s) => s.ref.name === name)?.status as { conditions?: Condition[] } | undefined;
  return body?.conditions?.find((c) => c.type === type);
}
const bodyOf = (statuses: ObjectStatus[], name: string): Record<string, unknown> => statuses.find((s) => s.ref.name === name)?.status ?? {};

describe('operator: the tuna.dev CRDs’ reservations at the edge', () => {
  it('reserves a Domain and a TCPPort of any port, labelled so they are found again, and says so in their statuses', async () => {
    const edge = new FakeReservingEdge(BASE);
    const { report, statuses } = await sync(reconcilerOf(edge), [domain('shop', { subdomain: 'shop' }), tcpPort('ssh', {})]);
    expect(report.crd).to.include({ reserved: 2, adopted: 0, released: 0 });
    const shop = edge.byValue(`shop.${BASE}`);
    expect(shop?.labels).to.deep.equal({ ...CLUSTER, 'tuna.dev/owner-kind': 'Domain.tuna.dev', [OWNER_LABEL]: 'shop/shop', [RECLAIM_LABEL]: 'Delete' });
    const ssh = edge.byValue('20000');
    expect(ssh?.name).to.equal('tuna.dev/c1/TCPPort/shop/ssh');
    expect(ssh?.labels).to.include({ 'tuna.dev/owner-kind': 'TCPPort.tuna.dev', [OWNER_LABEL]: 'shop/ssh' });
    expect(conditionOf(statuses, 'shop', 'Reserved')).to.include({ status: 'True', reason: 'Reserved' });
    expect(conditionOf(statuses, 'shop', 'Ready')).to.include({ status: 'True', reason: 'Ready' });
    expect(conditionOf(statuses, 'ssh', 'Reserved')).to.include({ status: 'True', reason: 'Reserved', message: 'the edge holds TCP port 20000 for the account' });
    expect(bodyOf(statuses, 'ssh')).to.include({ port: 20000, requestedPort: 0 });
    expect(bodyOf(statuses, 'shop')).to.include({ hostname: `shop.${BASE}` });
  });

  it('finds both again with no call but the listing, in the same and in a restarted reconciler', async () => {
    const edge = new FakeReservingEdge(BASE);
    const objects = [domain('shop', { subdomain: 'shop' }), tcpPort('ssh', {}), tcpPort('db', { port: 20005 })];
    await sync(reconcilerOf(edge), objects);
    const before = edge.log.length;
    const again = await sync(reconcilerOf(edge), objects);
    expect(edge.log.slice(before)).to.deep.equal(['listReservations', 'listTunnelKeys']);
    expect(again.report.crd).to.include({ reserved: 0, adopted: 0, released: 0 });
    expect(bodyOf(again.statuses, 'ssh')).to.include({ port: 20000 });
    expect(bodyOf(again.statuses, 'db')).to.include({ port: 20005 });
  });

  it('adopts a reservation the account already holds (made by hand, without labels) and labels it', async () => {
    const edge = new FakeReservingEdge(BASE);
    const { reservation } = await edge.reserve({ kind: 'domain', hostname: `shop.${BASE}` });
    const { report } = await sync(reconcilerOf(edge), [domain('shop', { subdomain: 'shop' })]);
    expect(report.crd).to.include({ reserved: 0, adopted: 1 });
    expect(edge.reservations.get(reservation.id)?.labels).to.include({ ...CLUSTER, [OWNER_LABEL]: 'shop/shop' });
    expect(edge.reservations.size).to.equal(1);
  });

  it('serves a TCPPort with the port this cluster holds for a Service as it is, without taking its labels', async () => {
    const edge = new FakeReservingEdge(BASE);
    const serviceLabels = { ...CLUSTER, 'tuna.dev/owner-kind': 'Service' };
    const { reservation } = await edge.reserve({ kind: 'tcp-port', port: 20004, labels: serviceLabels });
    const before = edge.calls('reserve');
    const { report, statuses } = await sync(reconcilerOf(edge), [tcpPort('db', { port: 20004 })]);
    expect(edge.calls('reserve')).to.equal(before);
    expect(report.crd).to.include({ reserved: 0, adopted: 0 });
    expect(edge.reservations.get(reservation.id)?.labels).to.deep.equal(serviceLabels);
    expect(bodyOf(statuses, 'db')).to.include({ port: 20004 });
    expect(conditionOf(statuses, 'db', 'Reserved')).to.include({ status: 'True' });
  });

  it('shows a custom domain’s verification state: Reserved Unknown DomainNotVerified with the TXT record, Ready False', async () => {
    const edge = new FakeReservingEdge(BASE);
    const { statuses } = await sync(reconcilerOf(edge), [domain('brand', { customDomain: 'shop.example.org' })]);
    const token = edge.byValue('shop.example.org')?.verificationToken;
    expect(conditionOf(statuses, 'brand', 'Reserved')).to.include({ status: 'Unknown', reason: 'DomainNotVerified' });
    expect(conditionOf(statuses, 'brand', 'Ready')).to.include({ status: 'False', reason: 'DomainNotVerified' });
    expect(bodyOf(statuses, 'brand')['verification']).to.deep.equal({ type: 'TXT', name: '_tuna-challenge.shop.example.org', value: token });
    expect(statuses.find((s) => s.ref.name === 'brand')?.events.map((e) => e.reason)).to.deep.equal(['DomainNotVerified']);
  });

  it('gives a custom Domain that a Tunnel publishes one DomainNotVerified event, not one from each correction', async () => {
    const edge = new FakeReservingEdge(BASE);
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } } as KubernetesObject;
    const tunnel = { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: { name: 'web', namespace: 'shop', creationTimestamp: created }, spec: { protocol: 'http', domainRef: { name: 'brand' }, service: { name: 'web', port: 'http' } } };
    const { report, statuses, graph } = await sync(reconcilerOf(edge), [domain('brand', { customDomain: 'shop.example.org' }), service, tunnel as unknown as KubernetesObject]);
    const corrected = correctHeldBack(statuses, graph, report.pending, report.addresses);
    expect(corrected.find((s) => s.ref.kind === 'Domain')?.events.map((e) => e.reason)).to.deep.equal(['DomainNotVerified']);
    expect(edge.reservations.size).to.equal(1);
  });

  it('reserves again what was released out of band, and holds it back as AlreadyReserved when another account took it meanwhile', async () => {
    const edge = new FakeReservingEdge(BASE);
    const reconciler = reconcilerOf(edge);
    const objects = [domain('shop', { subdomain: 'shop' }), tcpPort('db', { port: 20005 })];
    await sync(reconciler, objects);
    await edge.release(edge.byValue(`shop.${BASE}`)?.id ?? '');
    await edge.release(edge.byValue('20005')?.id ?? '');
    edge.takenElsewhere.add('20005');
    const { report, statuses } = await sync(reconciler, objects);
    expect(report.crd).to.include({ reserved: 1 });
    expect(edge.byValue(`shop.${BASE}`)?.labels).to.include({ [OWNER_LABEL]: 'shop/shop' });
    expect(conditionOf(statuses, 'db', 'Reserved')).to.include({ status: 'False', reason: 'AlreadyReserved' });
    expect(conditionOf(statuses, 'db', 'Ready')).to.include({ status: 'False', reason: 'AlreadyReserved' });
    expect(conditionOf(statuses, 'db', 'Reserved')?.message).to.equal('TCP port 20005 is not reserved: the edge refused it: tcp-port 20005 is reserved by another account');
    expect(bodyOf(statuses, 'db')).to.not.have.property('port');
  });

  it('releases a deleted Delete-policy Domain and retains a Retain-policy TCPPort for the account, revoking its keys; both are finalized', async () => {
    const edge = new FakeReservingEdge(BASE);
    const reconciler = reconcilerOf(edge);
    const objects = [domain('shop', { subdomain: 'shop' }), tcpPort('ssh', { reclaimPolicy: 'Retain' })];
    await sync(reconciler, objects);
    const ssh = edge.byValue('20000');
    const key = await edge.mintTunnelKey({ reservationId: ssh?.id ?? '', protocol: 'tcp', labels: CLUSTER });
    const deleting = { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['tuna.dev/reservation'] };
    const { report } = await sync(reconciler, [domain('shop', { subdomain: 'shop' }, deleting), tcpPort('ssh', { reclaimPolicy: 'Retain' }, deleting)]);
    expect(edge.byValue(`shop.${BASE}`)).to.equal(undefined);
    expect(report.crd?.released).to.equal(1);
    expect([...(report.crd?.finalized ?? [])].sort()).to.deep.equal(['tuna.dev/Domain/shop/shop', 'tuna.dev/TCPPort/shop/ssh']);
    expect(report.crd?.retained.get('tuna.dev/TCPPort/shop/ssh')).to.match(/^reclaimPolicy Retain: the edge keeps tcp-port 20000 for the account/);
    const kept = edge.byValue('20000');
    expect(kept?.id).to.equal(ssh?.id);
    expect(kept?.labels).to.not.have.property('tuna.dev/cluster');
    expect(kept?.labels).to.include({ [RETAINED_LABEL]: 'c1', [RECLAIM_LABEL]: 'Retain' });
    expect(edge.keys.get(key.tunnelKey.id)?.revokedAt).to.not.equal(null);
    // the cluster's listing no longer holds it: nothing more is done to it
    const after = await sync(reconciler, []);
    expect(after.report.crd).to.include({ released: 0 });
    expect(edge.byValue('20000')?.id).to.equal(ssh?.id);
    // a TCPPort of the same name, created again, gets the same port back (adopted by name)
    const recreated = await sync(reconciler, [tcpPort('ssh', {})]);
    expect(recreated.report.crd).to.include({ reserved: 0, adopted: 1 });
    expect(bodyOf(recreated.statuses, 'ssh')).to.include({ port: 20000 });
    expect(edge.byValue('20000')?.labels).to.include(CLUSTER);
  });

  it('keeps a deleted Domain’s hostname that an Ingress still publishes, and finalizes the Domain', async () => {
    const edge = new FakeReservingEdge(BASE);
    const reconciler = reconcilerOf(edge);
    const ingress = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', namespace: 'shop', creationTimestamp: created },
      spec: { ingressClassName: 'tuna', rules: [{ host: `shop.${BASE}`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    };
    const ingressClass = { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'tuna' }, spec: { controller: 'tuna.dev/ingress-controller' } };
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ port: 80 }] } };
    const rest = [ingress, ingressClass, service] as KubernetesObject[];
    await sync(reconciler, [domain('shop', { subdomain: 'shop' }), ...rest]);
    const { report } = await sync(reconciler, [domain('shop', { subdomain: 'shop' }, { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['tuna.dev/reservation'] }), ...rest]);
    expect(report.crd?.finalized.has('tuna.dev/Domain/shop/shop')).to.equal(true);
    expect(report.released).to.equal(0);
    expect(edge.byValue(`shop.${BASE}`)).to.not.equal(undefined);
    expect(report.ready.has(`binding/host/shop.${BASE}`)).to.equal(true);
  });

  it('lets go of a Domain or TCPPort deleted while the operator was down, as its reclaimPolicy label says, once the kind is listed', async () => {
    const edge = new FakeReservingEdge(BASE);
    await sync(reconcilerOf(edge), [domain('shop', { subdomain: 'shop' }), tcpPort('ssh', { reclaimPolicy: 'Retain' })]);
    // a restarted operator: neither object is in the cluster any more
    const unlisted = await sync(reconcilerOf(edge), [], (owner) => owner?.group !== 'tuna.dev');
    expect(unlisted.report.crd).to.include({ released: 0 });
    expect(edge.byValue(`shop.${BASE}`)?.labels).to.include(CLUSTER);
    const listed = await sync(reconcilerOf(edge), []);
    expect(listed.report.crd).to.include({ released: 1 });
    expect(edge.byValue(`shop.${BASE}`)).to.equal(undefined);
    expect(edge.byValue('20000')?.labels).to.include({ [RETAINED_LABEL]: 'c1' });
    expect(edge.byValue('20000')?.labels).to.not.have.property('tuna.dev/cluster');
  });

  it('at start, revokes the keys (and releases the reservations) of owners of every kind deleted while it was down, once their kinds are listed', async () => {
    const edge = new FakeReservingEdge(BASE);
    const owners = ['Ingress.networking.k8s.io', 'Service', 'Tunnel.tuna.dev', 'HTTPRoute.gateway.networking.k8s.io', 'GRPCRoute.gateway.networking.k8s.io', 'Gateway.gateway.networking.k8s.io'];
    const keyIds: string[] = [];
    for (const [i, owner] of owners.entries()) {
      const labels = { ...CLUSTER, 'tuna.dev/owner-kind': owner };
      const { reservation } = await edge.reserve({ kind: 'domain', hostname: `h${i}.${BASE}`, labels });
      keyIds.push((await edge.mintTunnelKey({ reservationId: reservation.id, protocol: 'http', labels })).tunnelKey.id);
    }
    // the Tunnel kind not listed yet: its key and reservation are kept
    const partial = await sync(reconcilerOf(edge), [], (owner) => owner !== undefined && owner.kind !== 'Tunnel');
    expect(partial.report).to.include({ revoked: owners.length - 1, released: owners.length - 1, kept: 2 });
    expect(edge.keys.get(keyIds[2] ?? '')?.revokedAt).to.equal(null);
    const full = await sync(reconcilerOf(edge), []);
    expect(full.report).to.include({ revoked: 1, released: 1, kept: 0 });
    expect([...edge.keys.values()].filter((k) => k.revokedAt === null)).to.deep.equal([]);
    expect(edge.reservations.size).to.equal(0);
  });

  it('leaves a Domain or TCPPort being deleted out of the translation and hands it over with its reclaimPolicy and held value', () => {
    const { live, deleting } = splitDeleting([
      domain('shop', { subdomain: 'shop', reclaimPolicy: 'Retain' }, { deletionTimestamp: '2026-01-02T00:00:00Z' }),
      { ...tcpPort('db', {}, { deletionTimestamp: '2026-01-02T00:00:00Z' }), status: { port: 20003 } } as KubernetesObject,
      tcpPort('ssh', {}),
    ]);
    expect(live.map((o) => o.metadata?.name)).to.deep.equal(['ssh']);
    expect(deleting.map((d) => [d.ref.kind, d.ref.name, d.reclaimPolicy, d.value])).to.deep.equal([
      ['Domain', 'shop', 'Retain', undefined],
      ['TCPPort', 'db', 'Delete', '20003'],
    ]);
  });
});
