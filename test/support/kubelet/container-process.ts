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
}

/** resolveArgv returns the program and arguments, following the image entrypoint/cmd rules. */
export function resolveArgv(container: V1Container, program: ImageProgram, env: ReadonlyMap<string, string>): string[] {
  const expand = (list: string[] | undefined) => (list ?? []).map((item) => expandVariables(item, env));
  const command = expand(container.command);
  const args = expand(container.args);
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
  const env: Record<string, string> = { PATH: HOST_PATH, ...Object.fromEntries(launch.env) };
  const log = openSync(launch.logFile, 'a');
  try {
    return spawn('ip', ['netns', 'exec', launch.netns, 'sh', '-c', script, launch.container.name, ...mountArgs, ...argv], {
      cwd: launch.workingDir,
      env,
      detached: true, // its own process group, so stopping the container reaches its children
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
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
