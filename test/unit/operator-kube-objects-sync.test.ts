import { expect } from 'chai';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import type { WatchedKind } from '../../src/operator/kube-objects.js';
import { errorLine } from '../../src/operator/log-line.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';

const kinds: WatchedKind[] = [
  { apiVersion: 'v1', kind: 'Service', group: '', plural: 'services', versions: ['v1'], path: '/api/v1/services', optional: false },
  { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', group: 'tuna.dev', plural: 'tunnels', versions: ['v1alpha1'], path: '/apis/tuna.dev/v1alpha1/tunnels', optional: true },
];

/**
 * FakeApiServer answers discovery for core v1 (tuna.dev is not installed: 404), lists Services
 * (answering 429 `storage is (re)initializing` the first `busyLists` times, with the headers an
 * apiserver sends), and holds watches open until closed.
 */
class FakeApiServer {
  readonly server: Server;
  busyLists = 1;
  lists = 0;
  readonly #watches = new Set<ServerResponse>();

  constructor() {
    this.server = createServer((req, res) => this.#answer(req, res));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const w of this.#watches) w.end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/api/v1') return json(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'services', namespaced: true, kind: 'Service', verbs: ['list', 'watch'] }] });
    if (url.pathname.startsWith('/apis/tuna.dev')) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
    if (url.pathname === '/api/v1/services' && url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      this.#watches.add(res);
      return;
    }
    if (url.pathname === '/api/v1/services') {
      this.lists++;
      if (this.lists <= this.busyLists)
        return json(
          429,
          { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429, message: 'storage is (re)initializing' },
          { 'retry-after': '1', 'audit-id': '6f1c0a5e-0000-4000-8000-000000000000', 'x-kubernetes-pf-flowschema-uid': 'abc' },
        );
      return json(200, { kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'web', namespace: 'default', resourceVersion: '7' }, spec: { ports: [{ port: 80 }] } }] });
    }
    json(404, { kind: 'Status', code: 404, reason: 'NotFound' });
  }
}

const configFor = (port: number): KubeConfig => fakeKubeConfig(`http://127.0.0.1:${port}`);

describe('operator: the object cache counts a kind only once it has been listed', () => {
  let api: FakeApiServer;
  let objects: KubeObjects | undefined;

  beforeEach(() => {
    api = new FakeApiServer();
  });

  afterEach(async () => {
    await objects?.stop();
    await api.close();
  });

  it('rides out a 429 on the first list: start() resolves only after a list succeeded, and the error is one line without headers', async () => {
    const errors: string[] = [];
    objects = new KubeObjects(configFor(await api.listen()), { kinds, retryMs: 20, onError: (kind, err) => errors.push(`${kind.kind}: ${errorLine(err)}`) });
    await objects.start();
    expect(objects.objects().map((o) => `${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`), 'the first snapshot is complete').to.deep.equal(['Service default/web']);
    expect(api.lists, 'listed again after the 429').to.be.greaterThan(1);
    expect(objects.hasSynced()).to.equal(true);
    expect(objects.hasListed('', 'Service')).to.equal(true);
    expect(objects.hasListed('tuna.dev', 'Tunnel'), 'an absent optional kind is not listed').to.equal(false);
    expect(objects.absentKinds()).to.deep.equal(['Tunnel.tuna.dev/v1alpha1']);
    expect(errors).to.deep.equal(['Service: HTTP 429 TooManyRequests: storage is (re)initializing']);
  });

  it('reports no error for the watches its own stop aborts', async () => {
    api.busyLists = 0;
    const errors: string[] = [];
    objects = new KubeObjects(configFor(await api.listen()), { kinds, retryMs: 20, onError: (kind, err) => errors.push(`${kind.kind}: ${errorLine(err)}`) });
    await objects.start();
    await objects.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).to.deep.equal([]);
  });
});
