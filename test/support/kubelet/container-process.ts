// container-process.ts — starts one container as a local process inside its pod's network namespace.
//
// `ip netns exec` enters the pod's network namespace and also a fresh mount namespace whose mounts
// do not propagate back to the host (iproute2 makes / a slave mount), so bind-mounting the pod's
// volumes at their mountPath there is invisible outside the container and vanishes with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Container } from '@kubernetes/client-node';
import { expandVariables } from './container-env.js';
import { imageArgv, rootfsScript, type RootfsMount, type RunAs } from './container-rootfs.js';
import type { PulledImage } from './image-puller.js';
import type { ImageProgram } from './image-table.js';

/** HOST_PATH is the PATH a container gets unless it sets its own. */
export const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** RunContainerError is a container that cannot be started (its reason goes to its status). */
export class RunContainerError extends Error {
  readonly code = 'TUNA_KUBELET_RUN_CONTAINER';
}

/** ContainerLaunch is everything needed to start a container process. */
export interface ContainerLaunch {
  readonly netns: string;
  readonly container: V1Container;
  readonly program: ImageProgram;
  readonly env: ReadonlyMap<string, string>;
  /** volumes maps a volume name to its directory on the host. */
  readonly volumes: ReadonlyMap<string, string>;
  readonly logFile: string;
  readonly workingDir: string;
  /** createdDirs collects mount points (and their parents) we created on the host, removed at shutdown. */
  readonly createdDirs: Set<string>;
  /** rootfs is set for a pulled image: its run's directory, user, and the pod's /etc files */
  readonly rootfs?: { readonly containerDir: string; readonly runAs: RunAs; readonly etcMounts: readonly RootfsMount[]; readonly hostname: string };
}

/** resolveArgv returns the program and arguments, following the image entrypoint/cmd rules. */
export function resolveArgv(container: V1Container, program: ImageProgram, env: ReadonlyMap<string, string>): string[] {
  const expand = (list: string[] | undefined) => (list ?? []).map((item) => expandVariables(item, env));
  const command = expand(container.command);
  const args = expand(container.args);
  if (program.kind === 'image') return imageArgv(container, program.image, expand);
  if (program.kind === 'host-command') {
    if (command.length === 0) throw new RunContainerError('image tuna.test/host needs a command');
    return [...command, ...args];
  }
  if (command.length > 0 && path.basename(command[0] ?? '') !== program.name) {
    throw new RunContainerError(`executable ${command[0]} not found in image (it runs ${program.name})`);
  }
  return [program.path, ...(program.prefixArgs ?? []), ...(command.length > 0 ? command.slice(1) : []), ...args];
}

/** ensureMountPoint creates a missing mount point on the host, remembering every directory (and
 * file) it created so shutdown can remove them, deepest first, while they are empty. */
function ensureMountPoint(target: string, isFile: boolean, created: Set<string>): void {
  const dir = isFile ? path.dirname(target) : target;
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = path.dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    mkdirSync(d);
    created.add(d);
  }
  if (isFile && !existsSync(target)) {
    closeSync(openSync(target, 'a'));
    created.add(target);
  }
}

/** startContainerProcess spawns the container; its stdout and stderr append to `logFile`. */
export function startContainerProcess(launch: ContainerLaunch): ChildProcess {
  const argv = resolveArgv(launch.container, launch.program, launch.env);
  if (launch.program.kind === 'image') return startImageProcess(launch, launch.program.image, argv);
  const mountArgs: string[] = [];
  for (const mount of launch.container.volumeMounts ?? []) {
    const volumeDir = launch.volumes.get(mount.name);
    if (!volumeDir) throw new RunContainerError(`volume ${mount.name} is not defined`);
    const source = mount.subPath ? path.join(volumeDir, mount.subPath) : volumeDir;
    const isFile = existsSync(source) && statSync(source).isFile();
    ensureMountPoint(mount.mountPath, isFile, launch.createdDirs);
    mountArgs.push(source, mount.mountPath, mount.readOnly ? 'bind,ro' : 'bind');
  }
  // Positional parameters keep every path unquoted-safe: mount -o OPTS "$1" "$2" for each triple.
  const steps = [];
  // A mount may hide the program itself (coredns mounts its ConfigMap at /root, where this machine
  // keeps Node): then the program is opened before the mounts and executed through that descriptor.
  const hidden = (file: string) => (launch.container.volumeMounts ?? []).some((m) => isUnder(file, m.mountPath));
  const program = argv[0] ?? '';
  const execViaDescriptor = launch.program.kind === 'binary' && hidden(program);
  if (launch.program.kind === 'binary') {
    const ownFiles = (launch.program.prefixArgs ?? []).map((arg) => (arg.startsWith('file:') ? fileURLToPath(arg) : arg));
    const hiddenFile = ownFiles.find((file) => path.isAbsolute(file) && hidden(file));
    if (hiddenFile) throw new RunContainerError(`a volume mount hides ${hiddenFile}, which the program needs`);
  }
  if (execViaDescriptor) steps.push(`exec 9<"\${${mountArgs.length + 1}}" || exit 127`);
  for (let i = 0; i < mountArgs.length; i += 3) steps.push(`mount -o "\${${i + 3}}" "\${${i + 1}}" "\${${i + 2}}" || exit 126`);
  const script = execViaDescriptor
    ? `${steps.join('\n')}\nshift ${mountArgs.length + 1}\nexec /proc/self/fd/9 "$@"`
    : `${steps.join('\n')}\nshift ${mountArgs.length}\nexec "$@"`;
  return spawnInNetns(launch, script, [...mountArgs, ...argv], launch.workingDir);
}

/** startImageProcess runs a pulled image's entrypoint in its own root (container-rootfs.ts). */
function startImageProcess(launch: ContainerLaunch, image: PulledImage, argv: string[]): ChildProcess {
  if (!launch.rootfs) throw new RunContainerError(`image ${image.reference} has no root filesystem prepared`);
  const mounts: RootfsMount[] = [...launch.rootfs.etcMounts];
  for (const mount of launch.container.volumeMounts ?? []) {
    const volumeDir = launch.volumes.get(mount.name);
    if (!volumeDir) throw new RunContainerError(`volume ${mount.name} is not defined`);
    mounts.push({ source: mount.subPath ? path.join(volumeDir, mount.subPath) : volumeDir, target: mount.mountPath, readOnly: mount.readOnly === true });
  }
  const { script, params } = rootfsScript({
    image,
    containerDir: launch.rootfs.containerDir,
    mounts,
    readOnlyRootFilesystem: launch.container.securityContext?.readOnlyRootFilesystem === true,
    runAs: launch.rootfs.runAs,
    workingDir: launch.container.workingDir ?? (image.config.workingDir || '/'),
    hostPath: HOST_PATH,
    hostname: launch.rootfs.hostname,
  });
  return spawnInNetns(launch, script, [...params, ...argv], launch.rootfs.containerDir, true);
}

/** spawnInNetns runs `sh -c script name args…` in the pod's network namespace (and a new mount namespace). */
function spawnInNetns(launch: ContainerLaunch, script: string, args: readonly string[], cwd: string, hasOwnUts = false): ChildProcess {
  const env: Record<string, string> = { PATH: HOST_PATH, ...Object.fromEntries(launch.env) };
  const log = openSync(launch.logFile, 'a');
  try {
    // ip and sh by absolute path: the PATH in `env` is the container's (an image's may hold neither)
    const inNetns = [hostTool('ip'), 'netns', 'exec', launch.netns, hostTool('sh'), '-c', script, launch.container.name, ...args];
    // a pulled image's container also gets a UTS namespace of its own, for the pod's hostname
    const [file = '', ...rest] = hasOwnUts ? [hostTool('unshare'), '--uts', ...inNetns] : inNetns;
    return spawn(file, rest, {
      cwd,
      env,
      detached: true, // its own process group, so stopping the container reaches its children
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
}

/** hostTool finds a program of the host on HOST_PATH (falling back to its bare name). */
function hostTool(name: string): string {
  for (const dir of HOST_PATH.split(':')) if (existsSync(path.join(dir, name))) return path.join(dir, name);
  return name;
}

/** isUnder says whether `file` is `dir` or inside it. */
function isUnder(file: string, dir: string): boolean {
  const base = dir.replace(/\/+$/, '');
  return file === base || file.startsWith(`${base}/`) || base === '';
}

/** signalContainer sends a signal to the container's whole process group. */
export function signalContainer(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is already gone
  }
}
