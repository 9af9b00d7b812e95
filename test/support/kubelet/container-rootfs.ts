// container-rootfs.ts — how a container of a pulled image runs: its root filesystem (an overlay of
// the unpacked image and a writable layer of its own), /proc, a small /dev, /etc/hosts and
// /etc/resolv.conf, the pod's volumes at their mountPath, then the entrypoint as the image's (or
// the security context's) user in its working directory.
//
// Everything is mounted inside the mount namespace `ip netns exec` gives the container (its mounts
// never reach the host) and `unshare --root --wd --setuid --setgid` enters it: chroot, chdir, drop
// the supplementary groups, setgid, setuid, exec. A non-root user keeps no capability.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { PulledImage } from './image-puller.js';

/** ContainerConfigError is a container whose spec and image cannot be run as asked (CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  readonly code = 'TUNA_KUBELET_CONTAINER_CONFIG';
}

/** RunAs is the numeric user and group a container process runs as. */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** lookupId finds a name in an /etc/passwd or /etc/group text: its id (field 3) and, for passwd, group (field 4). */
function lookupId(text: string, name: string): [number, number] | undefined {
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields.length >= 3) return [Number(fields[2]), Number(fields[3] ?? fields[2])];
  }
  return undefined;
}

function readEtc(rootfs: string, file: string): string {
  try {
    return readFileSync(path.join(rootfs, 'etc', file), 'utf8');
  } catch {
    return '';
  }
}

/**
 * resolveRunAs applies the Kubernetes rules: runAsUser/runAsGroup of the container, else of the pod,
 * else the image's USER (names looked up in the image's /etc/passwd and /etc/group); runAsNonRoot
 * refuses uid 0, and a non-numeric image user it cannot verify, as the kubelet does.
 */
export function resolveRunAs(pod: V1Pod, container: V1Container, image: PulledImage): RunAs {
  const podContext = pod.spec?.securityContext;
  const own = container.securityContext;
  const runAsUser = own?.runAsUser ?? podContext?.runAsUser;
  const runAsGroup = own?.runAsGroup ?? podContext?.runAsGroup;
  const runAsNonRoot = own?.runAsNonRoot ?? podContext?.runAsNonRoot;
  const [userPart = '', groupPart] = image.config.user.split(':');
  let uid: number;
  let gid: number | undefined;
  if (runAsUser !== undefined) uid = runAsUser;
  else if (userPart === '') uid = 0;
  else if (/^\d+$/.test(userPart)) uid = Number(userPart);
  else {
    if (runAsNonRoot) throw new ContainerConfigError(`container has runAsNonRoot and image has non-numeric user (${userPart}), cannot verify user is non-root`);
    const found = lookupId(readEtc(image.rootfs, 'passwd'), userPart);
    if (!found) throw new ContainerConfigError(`unable to find user ${userPart} in the image's /etc/passwd`);
    [uid, gid] = found;
  }
  if (runAsNonRoot && uid === 0) throw new ContainerConfigError('container has runAsNonRoot and image will run as root');
  if (runAsGroup !== undefined) gid = runAsGroup;
  else if (groupPart !== undefined && groupPart !== '') {
    const found = /^\d+$/.test(groupPart) ? [Number(groupPart)] : lookupId(readEtc(image.rootfs, 'group'), groupPart);
    if (!found) throw new ContainerConfigError(`unable to find group ${groupPart} in the image's /etc/group`);
    gid = found[0];
  }
  if (gid === undefined) {
    // the user's primary group from the image's /etc/passwd, else the uid's own number (runc's rule is 0)
    const line = readEtc(image.rootfs, 'passwd').split('\n').find((l) => l.split(':')[2] === String(uid));
    gid = line === undefined ? 0 : Number(line.split(':')[3] ?? 0);
  }
  return { uid, gid };
}

/** imageArgv follows the entrypoint rules: command replaces ENTRYPOINT (and drops CMD), args replace CMD. */
export function imageArgv(container: V1Container, image: PulledImage, expand: (list: string[] | undefined) => string[]): string[] {
  const command = expand(container.command);
  const args = expand(container.args);
  const argv = command.length > 0 ? [...command, ...args] : [...image.config.entrypoint, ...(container.args !== undefined ? args : image.config.cmd)];
  if (argv.length === 0) throw new ContainerConfigError(`image "${image.reference}" has no entrypoint and the container no command`);
  return argv;
}

/** RootfsMount is one bind mount into the container's root (a volume, or a file of /etc). */
export interface RootfsMount {
  readonly source: string;
  /** target is the path inside the container */
  readonly target: string;
  readonly readOnly: boolean;
}

/** RootfsLaunch is what the launch script of an image container needs. */
export interface RootfsLaunch {
  readonly image: PulledImage;
  /** containerDir holds this run's writable layer (upper, work) and the mount point of its root */
  readonly containerDir: string;
  readonly mounts: readonly RootfsMount[];
  readonly readOnlyRootFilesystem: boolean;
  readonly runAs: RunAs;
  readonly workingDir: string;
  /** hostPath is the PATH the script's own tools (mount, unshare) are found on */
  readonly hostPath: string;
  /** hostname is the pod's (spec.hostname, else its name), set in the container's own UTS namespace */
  readonly hostname: string;
}

/** DEVICES are the device nodes a container's /dev holds (bound from the host's). */
const DEVICES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'];

/**
 * rootfsScript returns an `sh -c` script and its positional parameters: it mounts the root and
 * execs the argv that follows the parameters ("$@" after the shift). Every path is a positional
 * parameter, so nothing a pod spec says is ever parsed by the shell.
 */
export function rootfsScript(launch: RootfsLaunch): { script: string; params: string[] } {
  const params: string[] = [];
  const p = (value: string) => {
    params.push(value);
    return `"\${${params.length}}"`;
  };
  for (const part of ['upper', 'work', 'root']) mkdirSync(path.join(launch.containerDir, part), { recursive: true });
  const root = path.join(launch.containerDir, 'root');
  const inRoot = (target: string) => {
    const full = path.join(root, target);
    if (full !== root && !full.startsWith(`${root}/`)) throw new ContainerConfigError(`mount path ${target} leaves the container's root`);
    return full;
  };
  const lines = [`ctr_path="$PATH"; PATH=${launch.hostPath}; export PATH`];
  const step = (line: string) => lines.push(`${line} || exit 126`);
  const overlay = `lowerdir=${launch.image.rootfs},upperdir=${path.join(launch.containerDir, 'upper')},workdir=${path.join(launch.containerDir, 'work')}`;
  step(`hostname ${p(launch.hostname)}`);
  step(`mount -t overlay overlay -o ${p(overlay)} ${p(root)}`);
  step(`mkdir -p ${p(inRoot('/proc'))} ${p(inRoot('/dev'))} ${p(inRoot('/etc'))} ${p(inRoot(launch.workingDir))}`);
  step(`mount -t proc -o nosuid,nodev,noexec proc ${p(inRoot('/proc'))}`);
  step(`mount -t tmpfs -o nosuid,mode=0755,size=1m tmpfs ${p(inRoot('/dev'))}`);
  for (const device of DEVICES) step(`: >${p(inRoot(`/dev/${device}`))} && mount --bind /dev/${device} ${p(inRoot(`/dev/${device}`))}`);
  step(`ln -s /proc/self/fd ${p(inRoot('/dev/fd'))} && mkdir ${p(inRoot('/dev/shm'))}`);
  step(`mount -t tmpfs -o nosuid,nodev,size=64m tmpfs ${p(inRoot('/dev/shm'))}`);
  for (const mount of launch.mounts) {
    const target = inRoot(mount.target);
    const isFile = existsSync(mount.source) && statSync(mount.source).isFile();
    step(isFile ? `mkdir -p ${p(path.dirname(target))} && { [ -e ${p(target)} ] || : >"\${${params.length}}"; }` : `mkdir -p ${p(target)}`);
    step(`mount --bind ${p(mount.source)} ${p(target)}`);
    if (mount.readOnly) step(`mount -o remount,bind,ro ${p(target)}`);
  }
  if (launch.readOnlyRootFilesystem) step(`mount -o remount,bind,ro ${p(root)}`);
  lines.push(`u="$(command -v unshare)" || exit 127`);
  lines.push(`r=${p(root)}; w=${p(launch.workingDir || '/')}`);
  lines.push(`shift ${params.length}`);
  lines.push(`PATH="$ctr_path"; export PATH`);
  lines.push(`exec "$u" --root="$r" --wd="$w" --setgid=${launch.runAs.gid} --setuid=${launch.runAs.uid} -- "$@"`);
  return { script: lines.join('\n'), params };
}
