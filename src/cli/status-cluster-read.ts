import { CoreV1Api, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { WATCHED_KINDS } from '../operator/index.js';
import type { WatchedKind } from '../operator/index.js';
import { referencedSecrets, snapshotFromObjects } from '../translate/index.js';
import { CliError } from './errors.js';
import { buildClusterStatus } from './status-cluster.js';
import type { ClusterEvent, ClusterObject } from './status-cluster.js';
import type { StatusReport } from './status-report.js';

/**
 * collectClusterStatus reads, once, what the operator watches (each kind at the first of its
 * versions the API serves; a kind whose CRD is not installed is left out), the events of the
 * cluster, and the TLS Secrets the translated listeners name, then builds the cluster view. A
 * Secret that cannot be read (RBAC) leaves its certificate's expiry unknown and says so.
 */
export async function collectClusterStatus(kubeconfig: string | undefined, context: string | undefined, baseDomain: string | undefined): Promise<StatusReport> {
  const config = new KubeConfig();
  if (kubeconfig !== undefined) config.loadFromFile(kubeconfig);
  else config.loadFromDefault();
  if (context !== undefined) config.setCurrentContext(context);
  const server = config.getCurrentCluster()?.server;
  if (server === undefined) throw new CliError('TUNA_CLI_USAGE', 'tuna status: the kubeconfig names no cluster', 2);
  const api = KubernetesObjectApi.makeApiClient(config);
  const core = config.makeApiClient(CoreV1Api);
  const notes: string[] = [];
  const objects = (await Promise.all(WATCHED_KINDS.map((k) => listKind(api, k)))).flat();
  const events = await core.listEventForAllNamespaces().then(
    (list) => list.items as ClusterEvent[],
    (err: unknown) => (notes.push(`events not read: ${describe(err)}`), []),
  );
  // The operator reads by name the Secrets listeners name (it does not watch Secrets); so does this view:
  // a translator checks they exist, and their `tls.crt` tells the certificates' expiry.
  const options = baseDomain !== undefined ? { baseDomain } : {};
  const certificates = new Map<string, string>();
  for (const ref of referencedSecrets(snapshotFromObjects([...objects]).snapshot, options)) {
    try {
      const secret = await core.readNamespacedSecret({ name: ref.name, namespace: ref.namespace });
      const crt = secret.data?.['tls.crt'];
      if (crt !== undefined) certificates.set(`${ref.namespace}/${ref.name}`, Buffer.from(crt, 'base64').toString('utf8'));
      objects.push({ ...secret, apiVersion: 'v1', kind: 'Secret' } as ClusterObject);
    } catch (err) {
      notes.push(`Secret ${ref.namespace}/${ref.name} not read: ${describe(err)}`);
    }
  }
  return buildClusterStatus({ source: server, objects, events, certificates, notes, ...options });
}

/** listKind lists one kind at the first version the API serves; none served: no objects. */
async function listKind(api: KubernetesObjectApi, kind: WatchedKind): Promise<ClusterObject[]> {
  for (const version of kind.versions) {
    const apiVersion = kind.group === '' ? version : `${kind.group}/${version}`;
    try {
      const list = await api.list<KubernetesObject>(apiVersion, kind.kind);
      return list.items.map((o) => ({ ...o, apiVersion, kind: kind.kind }) as ClusterObject);
    } catch (err) {
      if (!isNotServed(err)) throw new CliError('TUNA_CLI_CLUSTER_READ', `tuna status: cannot list ${kind.kind} (${apiVersion}): ${describe(err)}`, 69);
    }
  }
  return [];
}

/** isNotServed tells a kind the API does not serve (its CRD is not installed) from other failures. */
function isNotServed(err: unknown): boolean {
  const e = err as { code?: number; statusCode?: number; message?: string };
  return e.code === 404 || e.statusCode === 404 || /Unrecognized API version and kind|not found|could not find/i.test(e.message ?? '');
}

function describe(err: unknown): string {
  const e = err as { code?: number; statusCode?: number; message?: string };
  const code = e.code ?? e.statusCode;
  return typeof code === 'number' ? `HTTP ${code}` : (e.message ?? String(err)).split('\n')[0]!;
}
