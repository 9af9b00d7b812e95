// operator-crd-lifecycle.test.ts — the tuna.dev CRDs' lifecycle. With the operator
// in the test process and a store-mode edge on loopback: Domains and TCPPorts are reserved at the
// edge and carry the finalizer tuna.dev/reservation, with statuses saying what the edge holds; a
// reservation released out of band is reserved again by the next sync (or held back when another
// account took the port meanwhile); deleting a Delete-policy Domain, TCPPort or Tunnel releases its
// reservation before the object goes; a Retain-policy one stays at the edge, with an Event.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import type { Reservation } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { RESERVATION_FINALIZER } from '../../src/operator/finalizers.js';
import type { Operator } from '../../src/operator/operator.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, installTunaCrds, waitFor } from './cluster-env.js';
import { inProcessOperator } from './in-process-operator.js';

type Cond = { type: string; status: string; reason: string; message: string };
type Obj = { metadata?: { finalizers?: string[] }; status?: { conditions?: Cond[]; port?: number; hostname?: string } };

describe('operator: the tuna.dev CRDs’ reservations through their lifecycle (finalizers, Retain, re-creation)', function () {
  this.timeout(180_000);
  const pid = process.pid;
  const namespace = `tuna-crd-${pid}`;
  const clusterId = `crd-${pid}`;
  const shopHost = `shop-${pid}.${BASE_DOMAIN}`;
  const keptHost = `kept-${pid}.${BASE_DOMAIN}`;
  const tunnelHost = `web-${namespace}.${BASE_DOMAIN}`;
  // a port of the test edge's pool (21000-21999) that no other test asks for by number
  const dbPort = 21000 + (pid % 500) + 400;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let other: ControlClient;
  let operator: Operator;
  const errors: string[] = [];
  const inOurNamespace = (ref: { namespace?: string }): boolean => ref.namespace === undefined || ref.namespace === namespace;

  const kinds = { Domain: 'domains', TCPPort: 'tcpports', Tunnel: 'tunnels' } as const;
  const create = (kind: keyof typeof kinds, name: string, spec: Record<string, unknown>) =>
    custom.createNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: kinds[kind], body: { apiVersion: 'tuna.dev/v1alpha1', kind, metadata: { name }, spec } });
  const read = (kind: keyof typeof kinds, name: string): Promise<Obj | undefined> =>
    custom.getNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: kinds[kind], name }).then((o) => o as Obj, () => undefined);
  const remove = (kind: keyof typeof kinds, name: string) => custom.deleteNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: kinds[kind], name });
  const cond = (o: Obj | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);
  /** ours is what the edge holds for this cluster */
  const ours = async (): Promise<readonly Reservation[]> => (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
  const heldValue = async (value: string): Promise<Reservation | undefined> => (await client.listReservations()).reservations.find((r) => r.value === value);
  const reservedTrue = (kind: keyof typeof kinds, name: string) => async () => {
    const o = await read(kind, name);
    return cond(o, 'Reserved')?.status === 'True' && cond(o, 'Ready')?.status === 'True' && o?.metadata?.finalizers?.includes(RESERVATION_FINALIZER) ? o : undefined;
  };

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    await installTunaCrds(config.makeApiClient(ApiextensionsV1Api));
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await create('Domain', 'shop', { subdomain: `shop-${pid}` });
    await create('Domain', 'kept', { subdomain: `kept-${pid}`, reclaimPolicy: 'Retain' });
    await create('TCPPort', 'ssh', { reclaimPolicy: 'Retain' });
    await create('TCPPort', 'db', { port: dbPort });
    await create('Tunnel', 'web', { protocol: 'http', service: { name: 'web', port: 'http' } });

    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, (await seedAccount(store)).reservationsToken);
    other = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, (await seedAccount(store, 'other')).reservationsToken);
    ({ operator } = inProcessOperator(config, edge, client, {
      // resyncMs 0: every sync lists what the edge holds, so the next one sees an out-of-band release
      reconciler: { clusterId, resyncMs: 0 },
      errors,
      counts: inOurNamespace,
      events: true,
      finalizers: true,
      baseDomain: BASE_DOMAIN,
      retryMs: 500,
    }));
    await operator.start();
  });

  after(async () => {
    await operator?.stop();
    await edge?.edge.close();
    await store?.close();
    // what is left carries the finalizer of an operator that is gone: take it off, then the namespace can go
    for (const [kind, name] of [['Domain', 'shop'], ['Domain', 'kept'], ['TCPPort', 'ssh'], ['TCPPort', 'db'], ['Tunnel', 'web']] as const) {
      await custom
        ?.patchNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: kinds[kind], name, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
        .catch(() => undefined);
    }
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('reserves every Domain and TCPPort at the edge, labelled, and writes the finalizer and statuses saying what the edge holds', async () => {
    const shop = await waitFor('Domain shop Reserved', 30_000, reservedTrue('Domain', 'shop'));
    expect(cond(shop, 'Reserved')?.message).to.equal(`the edge holds ${shopHost} for the account`);
    await waitFor('Domain kept Reserved', 30_000, reservedTrue('Domain', 'kept'));
    const ssh = await waitFor('TCPPort ssh Reserved', 30_000, reservedTrue('TCPPort', 'ssh'));
    const db = await waitFor('TCPPort db Reserved', 30_000, reservedTrue('TCPPort', 'db'));
    expect(db.status?.port).to.equal(dbPort);
    await waitFor('Tunnel web has the finalizer', 30_000, async () => ((await read('Tunnel', 'web'))?.metadata?.finalizers?.includes(RESERVATION_FINALIZER) ? true : undefined));
    const held = await ours();
    const byValue = new Map(held.map((r) => [r.value, r]));
    expect(byValue.get(shopHost)?.labels).to.include({ 'tuna.dev/owner-kind': 'Domain.tuna.dev', 'tuna.dev/owner': `${namespace}/shop`, 'tuna.dev/reclaim-policy': 'Delete' });
    expect(byValue.get(keptHost)?.labels).to.include({ 'tuna.dev/reclaim-policy': 'Retain' });
    expect(byValue.get(String(ssh.status?.port))?.name).to.equal(`tuna.dev/${clusterId}/TCPPort/${namespace}/ssh`);
    expect(byValue.get(String(dbPort))?.kind).to.equal('tcp-port');
    expect(byValue.get(tunnelHost)?.kind).to.equal('domain');
  });

  it('reserves again, at the next sync, a Domain released out of band', async () => {
    const before = await heldValue(shopHost);
    await client.release(before?.id ?? '');
    expect(await heldValue(shopHost)).to.equal(undefined);
    // this sync, or one a watch event started meanwhile, reserves it again
    await operator.sync();
    const after = await heldValue(shopHost);
    expect(after?.id).to.not.equal(before?.id);
    expect(after?.labels).to.include({ 'tuna.dev/cluster': clusterId, 'tuna.dev/owner': `${namespace}/shop` });
    expect(cond(await read('Domain', 'shop'), 'Reserved')?.status).to.equal('True');
  });

  it('holds a TCPPort back as AlreadyReserved when another account took its port meanwhile, and reserves it once free again', async () => {
    // a sync a watch event starts between the release and the other account's reserve may take the
    // port back first: then release it again (bounded)
    let taken: Reservation | undefined;
    for (let attempt = 0; attempt < 5 && taken === undefined; attempt++) {
      const held = await heldValue(String(dbPort));
      if (held !== undefined) await client.release(held.id).catch(() => undefined);
      taken = await other.reserve({ kind: 'tcp-port', port: dbPort }).then((a) => a.reservation, () => undefined);
    }
    if (taken === undefined) throw new Error(`the other account could not take port ${dbPort}`);
    await operator.sync();
    const db = await read('TCPPort', 'db');
    expect(cond(db, 'Reserved')).to.include({ status: 'False', reason: 'AlreadyReserved' });
    expect(cond(db, 'Ready')).to.include({ status: 'False', reason: 'AlreadyReserved' });
    expect(db?.status?.port).to.equal(undefined);
    await other.release(taken.id);
    await operator.sync();
    expect((await read('TCPPort', 'db'))?.status?.port).to.equal(dbPort);
  });

  it('releases a Delete-policy Domain’s, TCPPort’s and Tunnel’s reservations (and keys) before the objects go', async () => {
    const tunnelReservation = await heldValue(tunnelHost);
    expect(tunnelReservation).to.not.equal(undefined);
    await remove('Domain', 'shop');
    await remove('TCPPort', 'db');
    await remove('Tunnel', 'web');
    for (const [kind, name] of [['Domain', 'shop'], ['TCPPort', 'db'], ['Tunnel', 'web']] as const) await waitFor(`${kind} ${name} gone`, 30_000, async () => ((await read(kind, name)) === undefined ? true : undefined));
    expect(await heldValue(shopHost)).to.equal(undefined);
    expect(await heldValue(String(dbPort))).to.equal(undefined);
    expect(await heldValue(tunnelHost)).to.equal(undefined);
    const live = (await client.listTunnelKeys({ 'tuna.dev/cluster': clusterId })).tunnelKeys.filter((k) => k.revokedAt === null && k.reservationId === tunnelReservation?.id);
    expect(live).to.deep.equal([]);
  });

  it('keeps a Retain-policy Domain’s and TCPPort’s reservations at the edge for the account, says so in an Event, and lets the objects go', async () => {
    const sshPort = String((await read('TCPPort', 'ssh'))?.status?.port);
    const keptBefore = await heldValue(keptHost);
    await remove('Domain', 'kept');
    await remove('TCPPort', 'ssh');
    for (const [kind, name] of [['Domain', 'kept'], ['TCPPort', 'ssh']] as const) await waitFor(`${kind} ${name} gone`, 30_000, async () => ((await read(kind, name)) === undefined ? true : undefined));
    const kept = await heldValue(keptHost);
    expect(kept?.id).to.equal(keptBefore?.id);
    expect(kept?.labels).to.include({ 'tuna.dev/retained-from': clusterId });
    expect(kept?.labels).to.not.have.property('tuna.dev/cluster');
    expect((await heldValue(sshPort))?.labels).to.include({ 'tuna.dev/retained-from': clusterId });
    expect((await ours()).map((r) => r.value)).to.not.include.members([keptHost, sshPort]);
    const events = (await core.listNamespacedEvent({ namespace })).items.filter((e) => e.reason === 'ReservationRetained');
    expect(events.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name}`).sort()).to.deep.equal(['Domain/kept', 'TCPPort/ssh']);
    expect(events.every((e) => e.type === 'Normal')).to.equal(true);
    // another sync does nothing to them: they are no longer this cluster's
    await operator.sync();
    expect((await heldValue(keptHost))?.id).to.equal(keptBefore?.id);
    expect(errors).to.deep.equal([]);
  });
});
