// kubelet.ts — the test kubelet: binds pending pods to its node and runs them as local processes.
import { rmdir, unlink } from 'node:fs/promises';
import type { Server } from 'node:https';
import path from 'node:path';
import {
  CoordinationV1Api,
  CoreV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Pod,
} from '@kubernetes/client-node';
import type { ImageTableOptions } from './image-table.js';
import { startLogServer, type LogServerOptions } from './log-server.js';
import { postNodeStatus, registerNode, renewLease, type NodeIdentity } from './node-status.js';
import { ensureBridge, IpAllocator, listOurNetns, NETNS_PREFIX, removeBridge, removePodNetwork, VETH_PREFIX } from './pod-network.js';
import { PodRunner } from './pod-runner.js';
import { ApiObjectReader } from './api-object-reader.js';
import { startApiserverRelay, type ApiserverRelay } from './apiserver-relay.js';
import type { ServiceAddress } from './container-env.js';
import type { ImagePuller } from './image-puller.js';

/** KubeletOptions configure one test kubelet. */
export interface KubeletOptions {
  readonly identity: NodeIdentity;
  /** nodeConfig authenticates as system:node:<name> (Node authorizer, NodeRestriction). */
  readonly nodeConfig: KubeConfig;
  /** binderConfig authenticates as the scheduler, the identity allowed to create pods/binding. */
  readonly binderConfig: KubeConfig;
  readonly images: ImageTableOptions;
  readonly stateDir: string;
  readonly logServer: Omit<LogServerOptions, 'port'>;
  readonly log: (message: string) => void;
  /** puller pulls images from loopback registries; without it only the image table runs */
  readonly puller?: ImagePuller;
  /** apiserverRelay makes the `kubernetes` Service (service) reach the apiserver (on loopback) from pods */
  readonly apiserverRelay?: { readonly service: ServiceAddress; readonly apiserver: ServiceAddress };
}

const HEARTBEAT_MS = 10_000;
const STATUS_RETRY_MS = 500;
const START_TIMEOUT_MS = 120_000;

/** Kubelet watches pods, binds unscheduled ones to its node and runs those bound to it. */
export class Kubelet {
  private readonly core: CoreV1Api;
  private readonly binder: CoreV1Api;
  private readonly runners = new Map<string, PodRunner>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly syncTimers = new Map<string, NodeJS.Timeout>();
  private readonly ips = new IpAllocator();
  private readonly createdDirs = new Set<string>();
  private informer: (Informer<V1Pod> & ObjectCache<V1Pod>) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private server: Server | undefined;
  private relay: ApiserverRelay | undefined;
  private isShuttingDown = false;

  constructor(private readonly options: KubeletOptions) {
    this.core = options.nodeConfig.makeApiClient(CoreV1Api);
    this.binder = options.binderConfig.makeApiClient(CoreV1Api);
  }

  /** start registers the node, serves the kubelet API and starts watching pods. */
  async start(): Promise<void> {
    const { identity } = this.options;
    await this.sweepLeftovers();
    await ensureBridge();
    const relay = this.options.apiserverRelay;
    if (relay) this.relay = await startApiserverRelay(relay.service, relay.apiserver);
    this.server = await startLogServer({ ...this.options.logServer, port: identity.kubeletPort }, (ns, pod, container) =>
      this.findRunner(ns, pod)?.findLogFile(container),
    );
    await this.retryUntilReachable(() => registerNode(this.core, identity));
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    const informer = makeInformer(this.options.binderConfig, '/api/v1/pods', () => this.binder.listPodForAllNamespaces());
    informer.on('add', (pod) => this.enqueue(pod));
    informer.on('update', (pod) => this.enqueue(pod));
    informer.on('delete', (pod) => this.enqueue(pod, true));
    informer.on('error', () => setTimeout(() => void informer.start().catch(() => undefined), 1000));
    this.informer = informer;
    await informer.start();
  }

  /** retryUntilReachable retries a first call while the apiserver is still starting (up.sh starts
   * the kubelet beside it, to overlap their start-up); bounded in time. */
  private async retryUntilReachable(call: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (Date.now() > deadline || this.isShuttingDown) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  private async beat(): Promise<void> {
    const coordination = this.options.nodeConfig.makeApiClient(CoordinationV1Api);
    try {
      const node = await this.core.readNode({ name: this.options.identity.name });
      await renewLease(coordination, this.options.identity, node.metadata?.uid ?? '');
      await postNodeStatus(this.core, this.options.identity);
    } catch (error) {
      this.options.log(`heartbeat failed: ${(error as Error).message}`);
    }
  }

  private findRunner(namespace: string, name: string): PodRunner | undefined {
    const pod = this.informer?.get(name, namespace);
    return pod?.metadata?.uid ? this.runners.get(pod.metadata.uid) : undefined;
  }

  /** enqueue serialises the work on one pod, so its start and stop never interleave. */
  private enqueue(pod: V1Pod, isDeleted = false): void {
    const uid = pod.metadata?.uid;
    if (!uid || this.isShuttingDown) return;
    const next = (this.queues.get(uid) ?? Promise.resolve())
      .then(() => this.handle(pod, isDeleted))
      .catch((error: unknown) => this.options.log(`pod ${pod.metadata?.namespace}/${pod.metadata?.name}: ${(error as Error).message}`));
    this.queues.set(uid, next);
  }

  private async handle(pod: V1Pod, isDeleted: boolean): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const name = this.options.identity.name;
    if (!pod.spec?.nodeName && !isDeleted && !pod.metadata?.deletionTimestamp) return this.bind(pod);
    if (pod.spec?.nodeName !== name) return;
    const runner = this.runners.get(uid);
    if (isDeleted || pod.metadata?.deletionTimestamp) {
      if (runner) {
        this.runners.delete(uid);
        await runner.stop(pod.metadata?.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? 30);
      }
      if (!isDeleted) await this.confirmDeletion(pod);
      this.queues.delete(uid);
      return;
    }
    if (runner) {
      runner.update(pod);
      return;
    }
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    const created = new PodRunner(
      pod,
      {
        reader: new ApiObjectReader(this.core),
        images: this.options.images,
        podsDir: path.join(this.options.stateDir, 'pods'),
        ips: this.ips,
        createdDirs: this.createdDirs,
        log: this.options.log,
        ...(this.options.puller ? { puller: this.options.puller } : {}),
        ...(this.options.apiserverRelay ? { kubernetesService: this.options.apiserverRelay.service } : {}),
      },
      () => this.scheduleStatusSync(uid),
    );
    this.runners.set(uid, created);
    await created.start();
  }

  private async bind(pod: V1Pod): Promise<void> {
    const { name = '', namespace = 'default' } = pod.metadata ?? {};
    await this.binder.createNamespacedPodBinding({
      name,
      namespace,
      body: { metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: this.options.identity.name } },
    });
  }

  /** confirmDeletion is the kubelet's final delete (grace 0) once the containers are gone. */
  private async confirmDeletion(pod: V1Pod): Promise<void> {
    const { name = '', namespace = 'default', uid } = pod.metadata ?? {};
    try {
      await this.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid } } });
    } catch (error) {
      if (![404, 409].includes((error as { code?: number }).code ?? 0)) throw error;
    }
  }

  private scheduleStatusSync(uid: string, delayMs = 50): void {
    if (this.syncTimers.has(uid) || this.isShuttingDown) return;
    this.syncTimers.set(
      uid,
      setTimeout(() => {
        this.syncTimers.delete(uid);
        void this.syncStatus(uid);
      }, delayMs),
    );
  }

  private async syncStatus(uid: string): Promise<void> {
    const runner = this.runners.get(uid);
    if (!runner) return;
    try {
      const pod = this.informer?.list().find((p) => p.metadata?.uid === uid);
      if (!pod || pod.metadata?.deletionTimestamp) return;
      const status = runner.status(pod.status);
      if (JSON.stringify(status) === JSON.stringify(pod.status)) return;
      const { name = '', namespace = 'default' } = pod.metadata ?? {};
      const fresh = await this.core.readNamespacedPod({ name, namespace });
      if (fresh.metadata?.uid !== uid) return;
      await this.core.replaceNamespacedPodStatus({ name, namespace, body: { ...fresh, status: runner.status(fresh.status) } });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) this.scheduleStatusSync(uid, STATUS_RETRY_MS);
    }
  }

  /** shutdown stops every pod, removes their namespaces, the bridge and created mount points. */
  async shutdown(): Promise<void> {
    this.isShuttingDown = true;
    clearInterval(this.heartbeat);
    for (const timer of this.syncTimers.values()) clearTimeout(timer);
    await this.informer?.stop().catch(() => undefined);
    this.server?.closeAllConnections();
    this.server?.close();
    await Promise.all([...this.runners.values()].map((runner) => runner.stop(2)));
    this.runners.clear();
    await this.sweepLeftovers();
    await this.relay?.close();
    await removeBridge();
    // Deepest first; rmdir only removes empty directories, so nothing of the host's is ever lost.
    for (const entry of [...this.createdDirs].sort((a, b) => b.length - a.length)) {
      await rmdir(entry).catch(() => unlink(entry).catch(() => undefined));
    }
  }

  /** sweepLeftovers removes namespaces a crashed kubelet left behind. */
  private async sweepLeftovers(): Promise<void> {
    for (const netns of await listOurNetns()) {
      await removePodNetwork({ netns, hostVeth: `${VETH_PREFIX}${netns.slice(NETNS_PREFIX.length)}` });
    }
  }
}
