import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { fakeKubeConfig } from './fake-kubeconfig.js';

/** StoredSecret is a Secret as the fake holds it. */
interface StoredSecret {
  metadata: { name: string; namespace: string; resourceVersion: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  data: Record<string, string>;
}

/** the apiserver's limit on a Secret's data: keys plus decoded values (k8s.io/api core/v1 MaxSecretSize) */
const MAX_SECRET_SIZE = 1024 * 1024;

/**
 * FakeSecretApi answers the Secret calls of the apiserver on loopback: get, create and update
 * (replace) of `/api/v1/namespaces/<ns>/secrets/<name>`, with resourceVersions (409 on a stale one,
 * or on creating one that exists), 404 for an absent one, and 422 for data over 1 MiB, as the
 * apiserver refuses it. `failWrites` makes every create and update answer 500. It counts calls.
 */
export class FakeSecretApi {
  readonly secrets = new Map<string, StoredSecret>();
  readonly calls = { get: 0, create: 0, update: 0, refusedTooLarge: 0 };
  failWrites = false;
  #server: Server | undefined;
  #version = 1;

  /** start listens on 127.0.0.1 and returns a KubeConfig pointing at it. */
  async start(): Promise<KubeConfig> {
    const server = createServer((req, res) => void this.#answer(req, res));
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fakeKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** sizeOf is a stored Secret's data size as the apiserver counts it. */
  static sizeOf(data: Record<string, string>): number {
    let size = 0;
    for (const [k, v] of Object.entries(data)) size += k.length + Buffer.from(v, 'base64').length;
    return size;
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const status = (code: number, reason: string, message: string): void => json(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message });
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const match = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/.exec(path);
    if (match === null) return status(404, 'NotFound', 'not found');
    const namespace = match[1] as string;
    const name = match[2];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> }; data?: Record<string, string> }) : {};
    const key = (n: string): string => `${namespace}/${n}`;
    const view = (s: StoredSecret): unknown => ({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', ...s });
    if (req.method === 'GET' && name !== undefined) {
      this.calls.get++;
      const s = this.secrets.get(key(name));
      return s === undefined ? status(404, 'NotFound', `secrets "${name}" not found`) : json(200, view(s));
    }
    const isCreate = req.method === 'POST' && name === undefined;
    const isUpdate = req.method === 'PUT' && name !== undefined;
    if (!isCreate && !isUpdate) return status(405, 'MethodNotAllowed', 'not allowed');
    if (isCreate) this.calls.create++;
    else this.calls.update++;
    if (this.failWrites) return status(500, 'InternalError', 'etcd is unavailable');
    const target = name ?? body.metadata?.name ?? '';
    const data = body.data ?? {};
    if (FakeSecretApi.sizeOf(data) > MAX_SECRET_SIZE) {
      this.calls.refusedTooLarge++;
      return status(422, 'Invalid', `Secret "${target}" is invalid: data: Too long: must have at most ${MAX_SECRET_SIZE} bytes`);
    }
    const existing = this.secrets.get(key(target));
    if (isCreate && existing !== undefined) return status(409, 'AlreadyExists', `secrets "${target}" already exists`);
    if (isUpdate && existing === undefined) return status(404, 'NotFound', `secrets "${target}" not found`);
    if (isUpdate && existing?.metadata.resourceVersion !== body.metadata?.resourceVersion) return status(409, 'Conflict', 'the object has been modified');
    const stored: StoredSecret = {
      metadata: { name: target, namespace, resourceVersion: String(++this.#version), ...(body.metadata?.annotations ? { annotations: body.metadata.annotations } : {}) },
      data,
    };
    this.secrets.set(key(target), stored);
    return json(isCreate ? 201 : 200, view(stored));
  }
}
