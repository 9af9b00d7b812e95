/**
 * The leader's side of dedicated data planes (docs/dedicated-data-plane.md): for each Gateway
 * binding of the graph marked `dedicated`, the objects of data-plane-objects.ts are made to exist
 * as generated (created, or replaced when what was applied differs: new infrastructure labels, a
 * new key, another replica count), and those of Gateways that went or became Shared are deleted.
 * A Gateway whose Deployment is not available is `Programmed=False` reason `Pending` with the
 * Deployment's own message (correctDataPlanes).
 *
 * Only objects labelled `tuna.dev/data-plane=true` are ever touched: Deployments and
 * ClusterRoleBindings are listed by that label (two lists a sync), every other name is derived from
 * theirs, and Secrets are never listed. What was applied is remembered by a hash of the generated
 * object (annotation `tuna.dev/applied`), so an unchanged Gateway costs no call but the two lists.
 */
import { createHash } from 'node:crypto';
import { AppsV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1ClusterRoleBinding, V1Deployment, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import type { Binding, Condition, ObjectStatus, RouteGraph } from '../model/index.js';
import { refKey } from '../model/index.js';
import { condition, upsert } from '../translate/index.js';
import {
  DATA_PLANE_LABEL,
  GATEWAY_NAME_LABEL,
  GATEWAY_NAMESPACE_LABEL,
  dataPlaneBindingName,
  dataPlaneName,
  dataPlaneObjects,
  dataPlaneProblem,
  dataPlaneSecretName,
} from './data-plane-objects.js';
import type { DataPlaneGateway, DataPlaneObjects, DataPlaneSettings } from './data-plane-objects.js';
import type { HeldKey } from './tunnel-keys.js';

/** APPLIED_ANNOTATION is the hash of the object as tuna generated it: a different one is replaced. */
export const APPLIED_ANNOTATION = 'tuna.dev/applied';

/** NamespacedKind are the namespaced kinds of a data plane. */
export type NamespacedKind = 'ServiceAccount' | 'Secret' | 'Deployment';

/** DataPlaneApi is what DataPlanes asks of the apiserver (KubeDataPlaneApi; a fake in tests). */
export interface DataPlaneApi {
  /** every Deployment labelled tuna.dev/data-plane=true, in every namespace */
  listDeployments(): Promise<V1Deployment[]>;
  /** every ClusterRoleBinding labelled tuna.dev/data-plane=true */
  listClusterRoleBindings(): Promise<V1ClusterRoleBinding[]>;
  /** the object's `tuna.dev/applied` annotation, or undefined when it does not exist */
  appliedOf(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<string | null | undefined>;
  /** create the object, or replace the one of its name */
  apply(kind: NamespacedKind | 'ClusterRoleBinding', obj: V1ServiceAccount | V1Secret | V1Deployment | V1ClusterRoleBinding, exists: boolean): Promise<void>;
  /** delete it; absent is fine */
  delete(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<void>;
}

/** DataPlanePending is a dedicated Gateway whose pods are not serving yet, and why. */
export interface DataPlanePending {
  bindingId: string;
  source: Binding['source'];
  message: string;
}

/** DataPlaneReport is what one reconcile of the data planes did. */
export interface DataPlaneReport {
  pending: DataPlanePending[];
  applied: number;
  deleted: number;
  /** the apiserver refused or failed a call: the Gateways not confirmed are pending, and the next sync tries again */
  error?: unknown;
  /** while reconciling: the bindings found available */
  confirmed?: Set<string>;
}

/** GatewayObject is the part of a Gateway object the data plane reads. */
export interface GatewayObject {
  metadata?: { name?: string; namespace?: string; uid?: string };
  spec?: { infrastructure?: { labels?: Record<string, string>; annotations?: Record<string, string> } };
}

/** hashOf is the applied hash of a generated object. */
function hashOf(obj: unknown): string {
  return createHash('sha256').update(JSON.stringify(obj)).digest('hex').slice(0, 32);
}

function withApplied<T extends { metadata?: { annotations?: Record<string, string> } }>(obj: T, hash: string): T {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata?.annotations, [APPLIED_ANNOTATION]: hash } } };
}

/** availability says whether a Deployment serves, and if not, why (its Available condition's message, or its replica counts). */
export function availability(d: V1Deployment | undefined, wantedReplicas: number): { isAvailable: boolean; message: string } {
  if (d === undefined) return { isAvailable: false, message: 'its data plane Deployment is being created' };
  const status = d.status ?? {};
  const available = status.availableReplicas ?? 0;
  const isCurrent = (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
  if (isCurrent && available >= 1) return { isAvailable: true, message: '' };
  const cond = (status.conditions ?? []).find((c) => c.type === 'Available' && c.status !== 'True') ?? (status.conditions ?? []).find((c) => c.type === 'Progressing' && c.status !== 'True');
  const counts = `${available} of ${wantedReplicas} pod(s) available`;
  return { isAvailable: false, message: `its data plane Deployment ${d.metadata?.name ?? ''} is not available: ${cond?.message ?? counts}` };
}

/**
 * DataPlanes reconciles the dedicated data planes of a graph. Without settings (the operator was
 * given no `--data-plane-image`) it asks the apiserver nothing, creates nothing, and every
 * dedicated Gateway is pending. A failed call fails no sync: the Gateways it did not confirm are
 * pending with its message, and the report carries the error.
 */
export class DataPlanes {
  /** object key → the hash last applied (or seen) there */
  readonly #applied = new Map<string, string>();

  constructor(
    private readonly api: DataPlaneApi,
    private readonly settings: DataPlaneSettings | undefined,
  ) {}

  /** forget drops what was remembered as applied (a new leader looks again). */
  forget(): void {
    this.#applied.clear();
  }

  async reconcile(graph: RouteGraph, gateways: ReadonlyMap<string, GatewayObject>, keyOf: (bindingId: string) => HeldKey | undefined): Promise<DataPlaneReport> {
    const report: DataPlaneReport = { pending: [], applied: 0, deleted: 0 };
    const dedicated = graph.bindings.filter((b) => b.kind === 'address' && b.dedicated !== undefined && b.source.namespace !== undefined);
    if (this.settings === undefined) {
      for (const b of dedicated) report.pending.push({ bindingId: b.id, source: b.source, message: 'its GatewayParameters ask for a dedicated data plane, and this operator was started without --data-plane-image' });
      return report;
    }
    try {
      await this.#reconcile(dedicated, gateways, keyOf, this.settings, report);
    } catch (err) {
      report.error = err;
      const pending = new Set(report.pending.map((p) => p.bindingId));
      const message = `its data plane could not be applied: ${err instanceof Error ? err.message : String(err)}`;
      for (const b of dedicated) if (!pending.has(b.id) && !report.confirmed?.has(b.id)) report.pending.push({ bindingId: b.id, source: b.source, message });
    }
    delete report.confirmed;
    return report;
  }

  async #reconcile(dedicated: readonly Binding[], gateways: ReadonlyMap<string, GatewayObject>, keyOf: (bindingId: string) => HeldKey | undefined, settings: DataPlaneSettings, report: DataPlaneReport): Promise<void> {
    report.confirmed = new Set();
    const [deployments, bindings] = await Promise.all([this.api.listDeployments(), this.api.listClusterRoleBindings()]);
    const deploymentAt = new Map(deployments.map((d) => [`${d.metadata?.namespace ?? ''}/${d.metadata?.name ?? ''}`, d]));
    const wanted = new Set<string>();
    const pend = (b: Binding, message: string): void => {
      report.pending.push({ bindingId: b.id, source: b.source, message });
    };
    for (const b of dedicated) {
      const namespace = b.source.namespace!;
      const name = b.source.name;
      wanted.add(`${namespace}/${name}`);
      const problem = dataPlaneProblem({ name });
      if (problem !== undefined) {
        pend(b, problem);
        continue;
      }
      const obj = gateways.get(`${namespace}/${name}`);
      const uid = obj?.metadata?.uid;
      const key = keyOf(b.id);
      if (uid === undefined || key === undefined) {
        pend(b, 'its data plane waits for the tunnel key of its address');
        continue;
      }
      const gw: DataPlaneGateway = { namespace, name, uid, ...infrastructureOf(obj) };
      const objects = dataPlaneObjects(gw, b.dedicated!, b.connections, { keyId: key.keyId, token: key.token, edgeBindingId: key.edgeBindingId ?? b.id }, settings);
      report.applied += await this.#applyAll(gw, objects, deploymentAt, bindings);
      const { isAvailable, message } = availability(deploymentAt.get(`${namespace}/${dataPlaneName(name)}`), b.dedicated!.replicas ?? 1);
      if (!isAvailable) pend(b, message);
      else report.confirmed.add(b.id);
    }
    // what Gateways that went or became Shared left behind
    for (const d of deployments) {
      const namespace = d.metadata?.namespace ?? '';
      const gateway = d.metadata?.labels?.[GATEWAY_NAME_LABEL];
      if (gateway === undefined || wanted.has(`${namespace}/${gateway}`) || d.metadata?.name !== dataPlaneName(gateway)) continue;
      await this.#deleteNamespaced(namespace, gateway);
      report.deleted++;
    }
    for (const crb of bindings) {
      const labels = crb.metadata?.labels ?? {};
      const namespace = labels[GATEWAY_NAMESPACE_LABEL];
      const gateway = labels[GATEWAY_NAME_LABEL];
      if (namespace === undefined || gateway === undefined || wanted.has(`${namespace}/${gateway}`)) continue;
      await this.api.delete('ClusterRoleBinding', '', crb.metadata?.name ?? '');
      this.#applied.delete(`ClusterRoleBinding//${crb.metadata?.name ?? ''}`);
      report.deleted++;
    }
  }

  /** applyAll makes each object as generated; the Deployment last, once its ServiceAccount, rights and Secret exist. */
  async #applyAll(gw: DataPlaneGateway, objects: DataPlaneObjects, deploymentAt: ReadonlyMap<string, V1Deployment>, bindings: readonly V1ClusterRoleBinding[]): Promise<number> {
    let applied = 0;
    const crbName = objects.clusterRoleBinding.metadata!.name!;
    const crb = bindings.find((c) => c.metadata?.name === crbName);
    const listed = (kind: string): string | null | undefined => {
      if (kind === 'ClusterRoleBinding') return crb === undefined ? undefined : (crb.metadata?.annotations?.[APPLIED_ANNOTATION] ?? null);
      if (kind !== 'Deployment') return undefined;
      const d = deploymentAt.get(`${gw.namespace}/${dataPlaneName(gw.name)}`);
      return d === undefined ? undefined : (d.metadata?.annotations?.[APPLIED_ANNOTATION] ?? null);
    };
    const steps: [NamespacedKind | 'ClusterRoleBinding', V1ServiceAccount | V1Secret | V1Deployment | V1ClusterRoleBinding][] = [
      ['ServiceAccount', objects.serviceAccount],
      ['ClusterRoleBinding', objects.clusterRoleBinding],
      ['Secret', objects.secret],
      ['Deployment', objects.deployment],
    ];
    for (const [kind, obj] of steps) {
      const namespace = kind === 'ClusterRoleBinding' ? '' : gw.namespace;
      const name = obj.metadata!.name!;
      const at = `${kind}/${namespace}/${name}`;
      const hash = hashOf(obj);
      const isListed = kind === 'ClusterRoleBinding' || kind === 'Deployment';
      // the listed kinds are checked against the list on every sync; the others against memory, then the apiserver
      if (!isListed && this.#applied.get(at) === hash) continue;
      const current = isListed ? listed(kind) : await this.api.appliedOf(kind, namespace, name);
      if (current !== hash) {
        await this.api.apply(kind, withApplied(obj, hash), current !== undefined);
        applied++;
      }
      this.#applied.set(at, hash);
    }
    return applied;
  }

  async #deleteNamespaced(namespace: string, gateway: string): Promise<void> {
    for (const [kind, name] of [['Deployment', dataPlaneName(gateway)], ['Secret', dataPlaneSecretName(gateway)], ['ServiceAccount', dataPlaneName(gateway)]] as const) {
      await this.api.delete(kind, namespace, name);
      this.#applied.delete(`${kind}/${namespace}/${name}`);
    }
    const crb = dataPlaneBindingName(namespace, gateway);
    await this.api.delete('ClusterRoleBinding', '', crb);
    this.#applied.delete(`ClusterRoleBinding//${crb}`);
  }
}

/** infrastructureOf reads a Gateway's `spec.infrastructure` labels and annotations (string values only). */
function infrastructureOf(obj: GatewayObject | undefined): Pick<DataPlaneGateway, 'labels' | 'annotations'> {
  const strings = (m: Record<string, unknown> | undefined): Record<string, string> | undefined =>
    m === undefined ? undefined : Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const infra = obj?.spec?.infrastructure;
  const labels = strings(infra?.labels);
  const annotations = strings(infra?.annotations);
  return { ...(labels !== undefined ? { labels } : {}), ...(annotations !== undefined ? { annotations } : {}) };
}

/**
 * correctDataPlanes returns the statuses with each pending dedicated Gateway `Programmed=False`
 * reason `Pending` (its message from the Deployment), where it said `Programmed=True`: an address
 * not assigned yet keeps its own reason. `statuses` is not modified.
 */
export function correctDataPlanes(statuses: readonly ObjectStatus[], pending: readonly DataPlanePending[]): ObjectStatus[] {
  if (pending.length === 0) return [...statuses];
  const byRef = new Map(pending.map((p) => [refKey(p.source), p]));
  return statuses.map((s) => {
    const p = byRef.get(refKey(s.ref));
    const body = s.status;
    if (p === undefined || body === undefined) return s;
    const conditions = Array.isArray(body.conditions) ? (body.conditions as Condition[]) : [];
    if (!conditions.some((c) => c.type === 'Programmed' && c.status === 'True')) return s;
    return { ...s, status: { ...body, conditions: upsert(conditions, condition('Programmed', 'False', 'Pending', p.message, s.observedGeneration)) } };
  });
}

/**
 * gatewayFragment is the part of a graph a Gateway's own pods serve: its address binding, the
 * listeners on it, and their virtual hosts and stream routes. Nothing else is reserved or held.
 */
export function gatewayFragment(graph: RouteGraph, bindingId: string): RouteGraph {
  const listeners = graph.listeners.filter((l) => l.bindingId === bindingId);
  const ids = new Set(listeners.map((l) => l.id));
  return {
    bindings: graph.bindings.filter((b) => b.id === bindingId),
    listeners,
    virtualHosts: graph.virtualHosts.filter((v) => ids.has(v.listenerId)),
    streamRoutes: graph.streamRoutes.filter((r) => ids.has(r.listenerId)),
    reservations: [],
  };
}

/** isNotFound tells a 404 from the apiserver. */
function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

/** KubeDataPlaneApi is DataPlaneApi on the apiserver. */
export class KubeDataPlaneApi implements DataPlaneApi {
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;
  readonly #rbac: RbacAuthorizationV1Api;
  static readonly #selector = `${DATA_PLANE_LABEL}=true`;

  constructor(kube: KubeConfig) {
    this.#apps = kube.makeApiClient(AppsV1Api);
    this.#core = kube.makeApiClient(CoreV1Api);
    this.#rbac = kube.makeApiClient(RbacAuthorizationV1Api);
  }

  async listDeployments(): Promise<V1Deployment[]> {
    return (await this.#apps.listDeploymentForAllNamespaces({ labelSelector: KubeDataPlaneApi.#selector })).items;
  }

  async listClusterRoleBindings(): Promise<V1ClusterRoleBinding[]> {
    return (await this.#rbac.listClusterRoleBinding({ labelSelector: KubeDataPlaneApi.#selector })).items;
  }

  async appliedOf(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<string | null | undefined> {
    try {
      const obj = await this.#read(kind, namespace, name);
      return obj.metadata?.annotations?.[APPLIED_ANNOTATION] ?? null;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #read(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<{ metadata?: { annotations?: Record<string, string> } }> {
    switch (kind) {
      case 'ServiceAccount':
        return this.#core.readNamespacedServiceAccount({ name, namespace });
      case 'Secret':
        return this.#core.readNamespacedSecret({ name, namespace });
      case 'Deployment':
        return this.#apps.readNamespacedDeployment({ name, namespace });
      case 'ClusterRoleBinding':
        return this.#rbac.readClusterRoleBinding({ name });
    }
  }

  async apply(kind: NamespacedKind | 'ClusterRoleBinding', obj: V1ServiceAccount | V1Secret | V1Deployment | V1ClusterRoleBinding, exists: boolean): Promise<void> {
    const name = obj.metadata?.name ?? '';
    const namespace = obj.metadata?.namespace ?? '';
    if (!exists) {
      try {
        await this.#create(kind, namespace, obj);
        return;
      } catch (err) {
        // made meanwhile (a restart before the list saw it): replace it
        if ((err as { code?: number }).code !== 409) throw err;
      }
    }
    await this.#replace(kind, namespace, name, obj);
  }

  async #create(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, body: object): Promise<unknown> {
    switch (kind) {
      case 'ServiceAccount':
        return this.#core.createNamespacedServiceAccount({ namespace, body: body as V1ServiceAccount });
      case 'Secret':
        return this.#core.createNamespacedSecret({ namespace, body: body as V1Secret });
      case 'Deployment':
        return this.#apps.createNamespacedDeployment({ namespace, body: body as V1Deployment });
      case 'ClusterRoleBinding':
        return this.#rbac.createClusterRoleBinding({ body: body as V1ClusterRoleBinding });
    }
  }

  async #replace(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string, body: object): Promise<unknown> {
    switch (kind) {
      case 'ServiceAccount':
        return this.#core.replaceNamespacedServiceAccount({ name, namespace, body: body as V1ServiceAccount });
      case 'Secret':
        return this.#core.replaceNamespacedSecret({ name, namespace, body: body as V1Secret });
      case 'Deployment':
        return this.#apps.replaceNamespacedDeployment({ name, namespace, body: body as V1Deployment });
      case 'ClusterRoleBinding':
        return this.#rbac.replaceClusterRoleBinding({ name, body: body as V1ClusterRoleBinding });
    }
  }

  async delete(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<void> {
    try {
      switch (kind) {
        case 'ServiceAccount':
          await this.#core.deleteNamespacedServiceAccount({ name, namespace });
          return;
        case 'Secret':
          await this.#core.deleteNamespacedSecret({ name, namespace });
          return;
        case 'Deployment':
          await this.#apps.deleteNamespacedDeployment({ name, namespace, propagationPolicy: 'Background' });
          return;
        case 'ClusterRoleBinding':
          await this.#rbac.deleteClusterRoleBinding({ name });
          return;
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
