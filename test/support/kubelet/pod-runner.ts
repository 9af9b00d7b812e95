// pod-runner.ts — one pod: its network namespace, volumes, containers, readiness and status.
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { V1ContainerState, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { ServiceAddress } from './container-env.js';
import { ContainerRunner } from './container-runner.js';
import type { ImagePuller } from './image-puller.js';
import type { ImageTableOptions } from './image-table.js';
import { createPodNetwork, removePodNetwork, type IpAllocator, type PodNetwork } from './pod-network.js';
import { writePodVolumes, type VolumeReader } from './pod-volumes.js';

/** PodRunnerDeps are the kubelet-wide services a pod uses. */
export interface PodRunnerDeps {
  readonly reader: VolumeReader;
  readonly images: ImageTableOptions;
  readonly podsDir: string;
  readonly ips: IpAllocator;
  readonly createdDirs: Set<string>;
  readonly log: (message: string) => void;
  /** puller pulls images from loopback registries (image-puller.ts) */
  readonly puller?: ImagePuller;
  /** kubernetesService is the apiserver's Service address every container is told of */
  readonly kubernetesService?: ServiceAddress;
}

const PROBE_INTERVAL_MS = 1000;
const VOLUME_RETRY_MS = 1000;

/** PodRunner runs the containers of one pod bound to this node. */
export class PodRunner {
  private network: PodNetwork | undefined;
  private containers: ContainerRunner[] = [];
  private readonly startTime = new Date();
  private readonly transitions = new Map<string, { status: string; time: Date }>();
  private probeTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private waitingReason: { reason: string; message: string } | undefined;
  private isStopping = false;

  constructor(
    private pod: V1Pod,
    private readonly deps: PodRunnerDeps,
    private readonly onChange: () => void,
  ) {}

  /** uid is the pod's UID. */
  get uid(): string {
    return this.pod.metadata?.uid ?? '';
  }

  /** podDir holds the pod's volumes and container logs. */
  get podDir(): string {
    return path.join(this.deps.podsDir, this.uid);
  }

  /** update gives the runner the newest copy of its pod (labels, annotations for the downward API). */
  update(pod: V1Pod): void {
    this.pod = pod;
  }

  /** findLogFile returns the log file of a container of this pod, if it has one. */
  findLogFile(container: string | undefined): string | undefined {
    const runner = container ? this.containers.find((c) => c.spec.name === container) : this.containers[0];
    return runner?.logFile;
  }

  /** start creates the network namespace and runs the containers. */
  async start(): Promise<void> {
    await mkdir(this.podDir, { recursive: true });
    const ip = this.deps.ips.allocate();
    try {
      this.network = await createPodNetwork(this.uid, ip);
    } catch (error) {
      this.deps.ips.release(ip);
      throw error;
    }
    this.onChange();
    await this.startContainers();
  }

  private async startContainers(): Promise<void> {
    const network = this.network;
    if (!network || this.isStopping) return;
    let volumes: Map<string, string>;
    try {
      volumes = await writePodVolumes(this.pod, this.podDir, network.ip, this.deps.reader);
      this.waitingReason = undefined;
    } catch (error) {
      // The Node authorizer learns of a new pod's Secrets a moment after binding: retry, as the kubelet does.
      this.waitingReason = { reason: 'CreateContainerConfigError', message: (error as Error).message };
      this.onChange();
      this.retryTimer = setTimeout(() => void this.startContainers(), VOLUME_RETRY_MS);
      return;
    }
    const context = {
      pod: () => this.pod,
      podIp: network.ip,
      netns: network.netns,
      podDir: this.podDir,
      volumes,
      reader: this.deps.reader,
      images: this.deps.images,
      createdDirs: this.deps.createdDirs,
      onChange: this.onChange,
      log: this.deps.log,
      ...(this.deps.puller ? { puller: this.deps.puller } : {}),
      ...(this.deps.kubernetesService ? { kubernetesService: this.deps.kubernetesService } : {}),
    };
    this.containers = (this.pod.spec?.containers ?? []).map((spec) => new ContainerRunner(spec, context));
    await Promise.all(this.containers.map((c) => c.start()));
    this.probeTimer = setInterval(() => void Promise.all(this.containers.map((c) => c.probe())), PROBE_INTERVAL_MS);
  }

  /** stop ends every container (SIGTERM, then SIGKILL after the grace period) and removes the network. */
  async stop(graceSeconds: number): Promise<void> {
    this.isStopping = true;
    clearInterval(this.probeTimer);
    clearTimeout(this.retryTimer);
    const graceMs = Math.min(Math.max(graceSeconds, 0), 10) * 1000;
    await Promise.all(this.containers.map((c) => c.stop(graceMs)));
    if (this.network) {
      await removePodNetwork(this.network);
      this.deps.ips.release(this.network.ip);
      this.network = undefined;
    }
    await rm(this.podDir, { recursive: true, force: true });
  }

  /** status merges what this kubelet owns into the pod's current status. */
  status(current: V1PodStatus | undefined): V1PodStatus {
    const statuses = this.containers.length
      ? this.containers.map((c) => c.status())
      : (this.pod.spec?.containers ?? []).map((c) => ({
          name: c.name,
          image: c.image ?? '',
          imageID: '',
          ready: false,
          started: false,
          restartCount: 0,
          state: { waiting: this.waitingReason ?? { reason: 'ContainerCreating' } },
        }));
    const allReady = statuses.length > 0 && statuses.every((s) => s.ready);
    const ours: Record<string, boolean> = {
      PodReadyToStartContainers: this.network !== undefined,
      Initialized: true,
      ContainersReady: allReady,
      Ready: allReady,
      PodScheduled: true,
    };
    const others = (current?.conditions ?? []).filter((c) => !(c.type in ours));
    const conditions = [...others, ...Object.entries(ours).map(([type, ok]) => this.condition(type, ok))];
    const ip = this.network?.ip;
    return {
      ...current,
      phase: computePhase(statuses.map((s): V1ContainerState => s.state ?? {}), this.pod.spec?.restartPolicy ?? 'Always'),
      conditions,
      containerStatuses: statuses,
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
      startTime: current?.startTime ?? this.startTime,
    };
  }

  private condition(type: string, ok: boolean): V1PodCondition {
    const status = ok ? 'True' : 'False';
    const previous = this.transitions.get(type);
    const time = previous?.status === status ? previous.time : new Date();
    this.transitions.set(type, { status, time });
    return { type, status, lastTransitionTime: time };
  }
}

/** computePhase follows the pod lifecycle rules: Running while any container runs or will restart. */
export function computePhase(states: readonly V1ContainerState[], restartPolicy: string): string {
  if (states.length === 0 || states.some((s) => !s.running && !s.terminated)) return states.some((s) => s.running) ? 'Running' : 'Pending';
  if (states.some((s) => s.running) || restartPolicy === 'Always') return 'Running';
  return states.every((s) => s.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
}
