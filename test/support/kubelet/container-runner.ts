// container-runner.ts — one container's life: start, exit, restart with back-off, readiness, status.
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { buildContainerEnv, kubernetesServiceEnv, type ObjectReader, type ServiceAddress } from './container-env.js';
import { HOST_PATH, signalContainer, startContainerProcess, type ContainerLaunch } from './container-process.js';
import { resolveRunAs } from './container-rootfs.js';
import { isLoopbackRegistry, referenceAtDigest, type ImagePuller, type PulledImage } from './image-puller.js';
import { resolveImage, type ImageProgram, type ImageTableOptions } from './image-table.js';
import { probeOnce, type ProbeRoot } from './readiness-probe.js';

/** ContainerContext is what a container needs from its pod. */
export interface ContainerContext {
  readonly pod: () => V1Pod;
  readonly podIp: string;
  readonly netns: string;
  readonly podDir: string;
  readonly volumes: ReadonlyMap<string, string>;
  readonly reader: ObjectReader;
  readonly images: ImageTableOptions;
  readonly createdDirs: Set<string>;
  readonly onChange: () => void;
  /** log writes a line to the kubelet's output (stand-in images are announced there). */
  readonly log?: (message: string) => void;
  /** puller pulls images from loopback registries; without it only the image table runs */
  readonly puller?: ImagePuller;
  /** kubernetesService is the `kubernetes` Service every container is told of (in-cluster config) */
  readonly kubernetesService?: ServiceAddress;
}

/** PULL_RETRY_MAX_MS bounds the back-off between attempts to pull an image. */
const PULL_RETRY_MAX_MS = 10_000;

const MAX_BACKOFF_MS = 10_000;

/** ContainerRunner runs one container of a pod as a local process and reports its status. */
export class ContainerRunner {
  private state: V1ContainerState = { waiting: { reason: 'ContainerCreating' } };
  private lastState: V1ContainerState = {};
  private restartCount = 0;
  private ready = false;
  private child: ChildProcess | undefined;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private probeFailures = 0;
  private isProbing = false;
  private pullFailures = 0;
  private imageId = '';
  private probeRoot: ProbeRoot | undefined;

  constructor(readonly spec: V1Container, private readonly context: ContainerContext) {}

  /** logFile is where the container's stdout and stderr go. */
  get logFile(): string {
    return path.join(this.context.podDir, `${this.spec.name}.log`);
  }

  /** isRunning says whether the process is alive. */
  get isRunning(): boolean {
    return this.state.running !== undefined;
  }

  /** start launches the process, or records why it cannot run (ErrImagePull, config errors). */
  async start(): Promise<void> {
    if (this.stopping) return;
    const program = await this.findProgram();
    if (!program || this.stopping) return;
    try {
      const own = await buildContainerEnv(this.context.pod(), this.spec, this.context.podIp, this.context.reader);
      if (this.stopping) return;
      const service = this.context.kubernetesService ? kubernetesServiceEnv(this.context.kubernetesService) : [];
      // the image's ENV, then the Service variables, then the container's own (later wins)
      const env = new Map([...(program.kind === 'image' ? program.image.config.env : []), ...service, ...own]);
      const child = startContainerProcess({
        netns: this.context.netns,
        container: this.spec,
        program,
        env,
        volumes: this.context.volumes,
        logFile: this.logFile,
        workingDir: this.spec.workingDir ?? this.context.podDir,
        createdDirs: this.context.createdDirs,
        ...(program.kind === 'image' ? { rootfs: this.prepareRootfs(program.image) } : {}),
      });
      this.child = child;
      this.probeFailures = 0;
      // ip netns exec, sh and unshare each exec the next: the child's pid is the container's process
      this.probeRoot =
        program.kind === 'image' && child.pid !== undefined
          ? { pid: child.pid, ...resolveRunAs(this.context.pod(), this.spec, program.image), path: env.get('PATH') ?? HOST_PATH }
          : undefined;
      child.once('exit', (code, signal) => this.onExit(code, signal));
      child.once('error', (error) => this.onExit(127, null, error.message));
      this.setState({ running: { startedAt: new Date() } });
    } catch (error) {
      const reason = (error as { code?: string }).code === 'TUNA_KUBELET_RUN_CONTAINER' ? 'RunContainerError' : 'CreateContainerConfigError';
      this.setState({ waiting: { reason, message: (error as Error).message } });
      this.scheduleRestart();
    }
  }

  /**
   * findProgram resolves the image: the table first (upstream images this machine cannot pull,
   * announced in the kubelet's output), else a pull from a loopback registry; undefined when it
   * cannot run (the state says why, and a failed pull is retried with back-off).
   */
  private async findProgram(): Promise<ImageProgram | undefined> {
    const image = this.spec.image ?? '';
    const isFirstStart = this.restartCount === 0 && !this.state.terminated;
    const pod = this.context.pod().metadata;
    const where = `pod ${pod?.namespace}/${pod?.name} container ${this.spec.name}`;
    const mapped = resolveImage(image, this.context.images);
    if (mapped) {
      this.imageId = `tuna.test/image-table/${image}`;
      if (isFirstStart) this.context.log?.(`${where}: image ${image} ${describeTableEntry(mapped)}`);
      return mapped;
    }
    if (!this.context.puller || !isLoopbackRegistry(image)) {
      this.setState({ waiting: { reason: 'ErrImagePull', message: `image "${image}" is neither on a loopback registry (the only ones this kubelet pulls from) nor in its image table` } });
      return undefined;
    }
    try {
      const pulled = await this.context.puller.pull(image);
      this.pullFailures = 0;
      this.imageId = referenceAtDigest(image, pulled.digest);
      if (isFirstStart) this.context.log?.(`${where}: image ${image} pulled (${pulled.digest}), running its entrypoint in its own root filesystem`);
      return { kind: 'image', image: pulled };
    } catch (error) {
      this.setState({ waiting: { reason: 'ErrImagePull', message: (error as Error).message } });
      const delay = Math.min(PULL_RETRY_MAX_MS, 1000 * 2 ** this.pullFailures++);
      this.restartTimer = setTimeout(() => void this.start(), delay);
      return undefined;
    }
  }

  /** prepareRootfs is a pulled image's run: a fresh writable layer, the user, /etc/hosts and resolv.conf. */
  private prepareRootfs(image: PulledImage): NonNullable<ContainerLaunch['rootfs']> {
    const runAs = resolveRunAs(this.context.pod(), this.spec, image);
    const containerDir = path.join(this.context.podDir, 'containers', `${this.spec.name}-${this.restartCount}`);
    const hosts = path.join(this.context.podDir, 'etc-hosts');
    const name = this.context.pod().spec?.hostname ?? this.context.pod().metadata?.name ?? '';
    writeFileSync(hosts, `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${this.context.podIp}\t${name}\n`);
    return {
      containerDir,
      runAs,
      hostname: name,
      etcMounts: [
        { source: hosts, target: '/etc/hosts', readOnly: false },
        { source: '/etc/resolv.conf', target: '/etc/resolv.conf', readOnly: true },
      ],
    };
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, message?: string): void {
    if (!this.state.running) return;
    const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
    this.child = undefined;
    this.ready = false;
    this.setState({
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        startedAt: this.state.running.startedAt,
        finishedAt: new Date(),
        ...(message !== undefined ? { message } : {}),
      },
    });
    const policy = this.context.pod().spec?.restartPolicy ?? 'Always';
    if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopping) return;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.restartCount);
    this.restartTimer = setTimeout(() => {
      if (this.state.terminated) {
        this.lastState = { terminated: this.state.terminated };
        this.restartCount++;
      }
      void this.start();
    }, delay);
  }

  /** probe runs the readiness check once; without a probe, ready means every TCP port accepts. */
  async probe(): Promise<void> {
    if (!this.state.running || this.isProbing) return;
    this.isProbing = true;
    try {
      const probe = this.spec.readinessProbe;
      let ok: boolean;
      if (probe) {
        const since = (Date.now() - (this.state.running.startedAt?.getTime() ?? 0)) / 1000;
        if (since < (probe.initialDelaySeconds ?? 0)) return;
        const success = await probeOnce(probe, this.spec, this.context.podIp, this.context.netns, this.probeRoot);
        this.probeFailures = success ? 0 : this.probeFailures + 1;
        ok = success || (this.ready && this.probeFailures < (probe.failureThreshold ?? 3));
      } else {
        ok = this.ready || (await this.arePortsOpen());
      }
      if (this.state.running && ok !== this.ready) {
        this.ready = ok;
        this.context.onChange();
      }
    } finally {
      this.isProbing = false;
    }
  }

  private async arePortsOpen(): Promise<boolean> {
    const ports = (this.spec.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP').map((p) => p.containerPort);
    const results = await Promise.all(ports.map((port) => isPortOpen(this.context.podIp, port)));
    return results.every(Boolean);
  }

  /** stop sends SIGTERM, waits up to graceMs, then SIGKILL; no restart follows. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    signalContainer(child, 'SIGTERM');
    const timer = setTimeout(() => signalContainer(child, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** status is this container's entry in pod.status.containerStatuses. */
  status(): V1ContainerStatus {
    const running = this.state.running !== undefined;
    return {
      name: this.spec.name,
      image: this.spec.image ?? '',
      imageID: this.imageId,
      containerID: `tuna://${this.context.pod().metadata?.uid ?? ''}/${this.spec.name}/${this.restartCount}`,
      ready: running && this.ready,
      started: running,
      restartCount: this.restartCount,
      state: this.state,
      lastState: this.lastState,
    };
  }

  private setState(state: V1ContainerState): void {
    this.state = state;
    this.context.onChange();
  }
}

/** describeTableEntry says, for the kubelet's output, what runs in place of an upstream image. */
function describeTableEntry(program: ImageProgram): string {
  if (program.kind === 'binary' && program.standIn) return `is a STAND-IN: ${program.standIn}`;
  if (program.kind === 'binary') return `is not pulled (an upstream image; tests reach only loopback): the image table runs ${program.path}, built from the same source`;
  return 'is not pulled: the image table runs the container\'s command from the host';
}

/** isPortOpen says whether a TCP connection to host:port succeeds within a second. */
function isPortOpen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1000 });
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
    socket.once('timeout', () => finish(false));
  });
}
