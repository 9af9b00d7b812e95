/**
 * The operator's object cache picks each kind's version from API discovery: the table's first
 * version the API serves (TLSRoute and TCPRoute: v1, else v1alpha2), and moves to a more preferred
 * one once it is served. Against a fake discovery answer, and a fake apiserver on loopback.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { KubeObjects, WATCHED_KINDS, chooseVersion } from '../../src/operator/kube-objects.js';
import type { ApiDiscovery, WatchedKind } from '../../src/operator/kube-objects.js';
import { KINDS } from '../../src/translate/index.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';

const GW = 'gateway.networking.k8s.io';

/** fakeDiscovery serves the given `kind@apiVersion` pairs and counts questions. */
function fakeDiscovery(served: Set<string>): ApiDiscovery & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    isServed: (apiVersion, kind) => {
      asked.push(`${kind}@${apiVersion}`);
      return Promise.resolve(served.has(`${kind}@${apiVersion}`));
    },
  };
}

function watched(kind: string): WatchedKind {
  const k = WATCHED_KINDS.find((w) => w.kind === kind);
  if (!k) throw new Error(`${kind} is not watched`);
  return k;
}

describe('operator watched kinds, from the table of kinds', () => {
  it('watches every watched row of the table, and not Secrets', () => {
    expect(WATCHED_KINDS.map((k) => k.kind)).to.deep.equal(KINDS.filter((k) => k.watched).map((k) => k.kind));
    expect(WATCHED_KINDS.map((k) => k.kind)).to.not.include('Secret');
  });

  it('names TLSRoute and TCPRoute at v1 first, then v1alpha2', () => {
    for (const kind of ['TLSRoute', 'TCPRoute']) {
      expect(watched(kind).versions).to.deep.equal(['v1', 'v1alpha2']);
      expect(watched(kind)).to.include({ apiVersion: `${GW}/v1`, path: `/apis/${GW}/v1/${kind.toLowerCase()}s`, optional: true });
    }
    expect(watched('Service')).to.include({ apiVersion: 'v1', path: '/api/v1/services', optional: false });
  });


  it('is granted list and watch on every watched kind by config/rbac/operator.yaml', () => {
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config', 'rbac', 'operator.yaml');
    type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
    const role = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; rules?: Rule[] })
      .find((d) => d.kind === 'ClusterRole');
    const granted = (group: string, plural: string, verb: string): boolean =>
      (role?.rules ?? []).some((r) => r.apiGroups.includes(group) && r.resources.includes(plural) && r.verbs.includes(verb));
    for (const k of WATCHED_KINDS) {
      expect(granted(k.group, k.plural, 'list'), `list ${k.plural}`).to.equal(true);
      expect(granted(k.group, k.plural, 'watch'), `watch ${k.plural}`).to.equal(true);
    }
  });

  it('grants a dedicated data plane (ClusterRole tuna-data-plane) list and watch on every watched kind, and nothing but reads', () => {
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config', 'rbac', 'operator.yaml');
    type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
    const role = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; rules?: Rule[] })
      .find((d) => d.kind === 'ClusterRole' && d.metadata?.name === 'tuna-data-plane');
    const rules = role?.rules ?? [];
    for (const k of WATCHED_KINDS)
      for (const verb of ['list', 'watch']) expect(rules.some((r) => r.apiGroups.includes(k.group) && r.resources.includes(k.plural) && r.verbs.includes(verb)), `${verb} ${k.plural}`).to.equal(true);
    expect([...new Set(rules.flatMap((r) => r.verbs))].sort()).to.deep.equal(['get', 'list', 'watch']);
    expect(rules.filter((r) => r.resources.includes('secrets')).flatMap((r) => r.verbs)).to.deep.equal(['get']);
    expect(rules.flatMap((r) => r.resources).filter((r) => r.includes('/'))).to.deep.equal([]);
  });
});

describe('chooseVersion', () => {
  it('prefers v1 when the API serves both versions', async () => {
    const discovery = fakeDiscovery(new Set([`TLSRoute@${GW}/v1`, `TLSRoute@${GW}/v1alpha2`]));
    expect(await chooseVersion(watched('TLSRoute'), discovery)).to.equal('v1');
  });

  it('falls back to v1alpha2 when v1 is not served', async () => {
    const discovery = fakeDiscovery(new Set([`TCPRoute@${GW}/v1alpha2`]));
    expect(await chooseVersion(watched('TCPRoute'), discovery)).to.equal('v1alpha2');
    expect(discovery.asked).to.deep.equal([`TCPRoute@${GW}/v1`, `TCPRoute@${GW}/v1alpha2`]);
  });

  it('answers undefined when no version is served', async () => {
    expect(await chooseVersion(watched('TLSRoute'), fakeDiscovery(new Set()))).to.equal(undefined);
  });

  it('decides per kind: the group serving v1 for one kind says nothing of another', async () => {
    const discovery = fakeDiscovery(new Set([`HTTPRoute@${GW}/v1`, `TLSRoute@${GW}/v1alpha2`]));
    expect(await chooseVersion(watched('TLSRoute'), discovery)).to.equal('v1alpha2');
  });

  it('does not ask about a kind with one version', async () => {
    const discovery = fakeDiscovery(new Set());
    expect(await chooseVersion(watched('HTTPRoute'), discovery)).to.equal('v1');
    expect(discovery.asked).to.deep.equal([]);
  });
});

/** FakeApiServer answers discovery, list and watch for TLSRoutes at the versions in `served`. */
class FakeApiServer {
  readonly served = new Set<string>();
  readonly server: Server;
  readonly requests: string[] = [];

  constructor() {
    this.server = createServer((req, res) => this.#answer(req, res));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    this.requests.push(`${url.pathname}${url.searchParams.get('watch') ? '?watch' : ''}`);
    const m = /^\/apis\/gateway\.networking\.k8s\.io\/(v1|v1alpha2)(\/tlsroutes)?$/.exec(url.pathname);
    const version = m?.[1];
    if (!m || version === undefined || !this.served.has(version)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
      return;
    }
    const groupVersion = `${GW}/${version}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (!m[2]) {
      res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: [{ name: 'tlsroutes', singularName: 'tlsroute', namespaced: true, kind: 'TLSRoute', verbs: ['list', 'watch'] }] }));
      return;
    }
    if (url.searchParams.get('watch')) {
      res.flushHeaders(); // a watch that sees no change: held open until closed
      return;
    }
    const item = { apiVersion: groupVersion, kind: 'TLSRoute', metadata: { name: 'tls', namespace: 'apps', resourceVersion: '7' }, spec: { hostnames: ['a.example.com'] } };
    res.end(JSON.stringify({ kind: 'TLSRouteList', apiVersion: groupVersion, metadata: { resourceVersion: '7' }, items: [item] }));
  }
}


async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('KubeObjects version choice against a fake apiserver', () => {
  let api: FakeApiServer;
  let objects: KubeObjects | undefined;

  beforeEach(() => {
    api = new FakeApiServer();
  });

  afterEach(async () => {
    await objects?.stop();
    objects = undefined;
    await api.close();
  });

  it('watches TLSRoutes at v1alpha2 where v1 is not served, and moves to v1 once it is', async () => {
    api.served.add('v1alpha2');
    const errors: string[] = [];
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: [watched('TLSRoute')], debounceMs: 5, retryMs: 20, onError: (_k, e) => errors.push(String(e)) });
    let changes = 0;
    objects.onChange(() => changes++);
    await objects.start();
    expect(objects.watchedVersions().get('TLSRoute')).to.equal(`${GW}/v1alpha2`);
    expect(objects.objects().map((o) => o.apiVersion)).to.deep.equal([`${GW}/v1alpha2`]);

    api.served.add('v1');
    await until('TLSRoute watched at v1', () => objects?.watchedVersions().get('TLSRoute') === `${GW}/v1`);
    expect(objects.objects().map((o) => `${o.apiVersion} ${o.kind} ${o.metadata?.name}`)).to.deep.equal([`${GW}/v1 TLSRoute tls`]);
    await until('a change reported', () => changes > 0);
    expect(api.requests).to.include(`/apis/${GW}/v1/tlsroutes?watch`);
    expect(errors).to.deep.equal([]);
  });

  it('moves to v1 when the version it watches stops being served (its watch ends, the new list fails)', async () => {
    api.served.add('v1alpha2');
    const errors: string[] = [];
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: [watched('TLSRoute')], debounceMs: 5, retryMs: 20, onError: (_k, e) => errors.push(String(e)) });
    await objects.start();
    expect(objects.watchedVersions().get('TLSRoute')).to.equal(`${GW}/v1alpha2`);
    // a CRD upgrade to the standard channel: v1alpha2 is no longer served, v1 is
    api.served.delete('v1alpha2');
    api.served.add('v1');
    api.server.closeAllConnections();
    await until('TLSRoute watched at v1', () => objects?.watchedVersions().get('TLSRoute') === `${GW}/v1`);
    expect(objects.objects().map((o) => o.apiVersion)).to.deep.equal([`${GW}/v1`]);
  });

  it('watches v1 at once when both versions are served, and stops asking', async () => {
    api.served.add('v1').add('v1alpha2');
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: [watched('TLSRoute')], debounceMs: 5, retryMs: 20 });
    await objects.start();
    expect(objects.watchedVersions().get('TLSRoute')).to.equal(`${GW}/v1`);
    expect(api.requests.some((r) => r.includes('v1alpha2'))).to.equal(false);
  });

  it('notes TLSRoute absent when neither version is served, and finds it once v1 is', async () => {
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: [watched('TLSRoute')], debounceMs: 5, retryMs: 20 });
    await objects.start();
    expect(objects.absentKinds()).to.deep.equal([`TLSRoute.${GW}/v1,v1alpha2`]);
    expect(objects.objects()).to.deep.equal([]);
    api.served.add('v1');
    await until('TLSRoute watched at v1', () => objects?.watchedVersions().get('TLSRoute') === `${GW}/v1`);
    expect(objects.absentKinds()).to.deep.equal([]);
  });

  it('looks for a kind that stays absent less and less often (absentRetryMaxMs), and still finds it once it is served', async () => {
    // retryMs 20 with the cap at 160: 20, 40, 80, 160, 160, ... — without the backoff, 600 ms would be 30 lookups
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: [watched('TLSRoute')], debounceMs: 5, retryMs: 20, absentRetryMaxMs: 160 });
    await objects.start();
    const lookups = (): number => api.requests.filter((r) => r === `/apis/${GW}/v1`).length;
    const first = lookups();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(lookups() - first, 'lookups of v1 in 600 ms').to.be.at.most(8);
    api.served.add('v1');
    await until('TLSRoute watched at v1', () => objects?.watchedVersions().get('TLSRoute') === `${GW}/v1`);
    expect(objects.absentKinds()).to.deep.equal([]);
  });
});
