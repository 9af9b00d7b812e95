// pod-volumes.ts — materialises a pod's volumes as files in its directory on the host.
//
// Secret, ConfigMap, downward API and projected volumes (the service-account token volume every pod
// gets is a projected one) are written once at pod start; emptyDir is a directory; hostPath is the
// host path itself. They are bind-mounted at the container's mountPath inside the container's own
// mount namespace (see container-process.ts).
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1KeyToPath, V1Pod, V1Volume } from '@kubernetes/client-node';
import { MissingReferenceError, resolveFieldRef, type ObjectReader } from './container-env.js';

/** VolumeReader adds the TokenRequest API to ObjectReader, for serviceAccountToken projections. */
export interface VolumeReader extends ObjectReader {
  requestToken(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
}

type Files = Map<string, { data: string; mode?: number | undefined; owner?: { uid: number; gid: number } | undefined }>;

/**
 * tokenFileAccess is the kubelet's rule for a projected service-account token: with fsGroup, group
 * fsGroup and mode 0640; else, when every container runs as one runAsUser, that user and mode 0600;
 * else the volume's mode (0644 by default), so a non-root process can always read its own token.
 */
export function tokenFileAccess(pod: V1Pod, defaultMode: number | undefined): { mode: number; owner?: { uid: number; gid: number } } {
  const context = pod.spec?.securityContext;
  if (context?.fsGroup !== undefined) return { mode: 0o640, owner: { uid: 0, gid: context.fsGroup } };
  const users = (pod.spec?.containers ?? []).map((c) => c.securityContext?.runAsUser ?? context?.runAsUser);
  const [first] = users;
  if (first !== undefined && users.every((u) => u === first)) return { mode: 0o600, owner: { uid: first, gid: context?.runAsGroup ?? 0 } };
  return { mode: defaultMode ?? 0o644 };
}

/** writePodVolumes writes every volume of the pod under `podDir/volumes` and maps name → host path. */
export async function writePodVolumes(
  pod: V1Pod,
  podDir: string,
  podIp: string,
  reader: VolumeReader,
): Promise<Map<string, string>> {
  const paths = new Map<string, string>();
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.hostPath) {
      paths.set(volume.name, volume.hostPath.path);
      continue;
    }
    const dir = path.join(podDir, 'volumes', volume.name);
    await mkdir(dir, { recursive: true });
    // an emptyDir is writable by any user, as the kubelet makes it (a non-root container writes there)
    if (volume.emptyDir) await chmod(dir, 0o777);
    const files = await collectVolumeFiles(pod, volume, podIp, reader);
    for (const [relative, file] of files) {
      const target = path.join(dir, relative);
      if (!target.startsWith(dir + path.sep)) continue; // a path like ../x must not escape the volume
      await mkdir(path.dirname(target), { recursive: true });
      const defaultMode = volume.secret?.defaultMode ?? volume.configMap?.defaultMode ?? volume.projected?.defaultMode ?? volume.downwardAPI?.defaultMode;
      await writeFile(target, file.data, { mode: file.mode ?? defaultMode ?? 0o644 });
      if (file.owner) await chown(target, file.owner.uid, file.owner.gid);
    }
    paths.set(volume.name, dir);
  }
  return paths;
}

async function collectVolumeFiles(pod: V1Pod, volume: V1Volume, podIp: string, reader: VolumeReader): Promise<Files> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const files: Files = new Map();
  const addData = (data: Record<string, string> | undefined, items: V1KeyToPath[] | undefined, what: string, optional?: boolean) => {
    if (!data) {
      if (!optional) throw new MissingReferenceError(`${what} not found`);
      return;
    }
    if (!items?.length) {
      for (const [key, value] of Object.entries(data)) files.set(key, { data: value });
      return;
    }
    for (const item of items) {
      const value = data[item.key];
      if (value === undefined && !optional) throw new MissingReferenceError(`${what}: key ${item.key} not found`);
      if (value !== undefined) files.set(item.path, { data: value, mode: item.mode });
    }
  };
  if (volume.secret) {
    const name = volume.secret.secretName ?? '';
    addData(await reader.readSecret(namespace, name), volume.secret.items, `secret ${name}`, volume.secret.optional);
  }
  if (volume.configMap) {
    const name = volume.configMap.name ?? '';
    addData(await reader.readConfigMap(namespace, name), volume.configMap.items, `configmap ${name}`, volume.configMap.optional);
  }
  for (const item of volume.downwardAPI?.items ?? []) {
    if (item.fieldRef) files.set(item.path, { data: resolveFieldRef(pod, podIp, item.fieldRef), mode: item.mode });
  }
  for (const source of volume.projected?.sources ?? []) {
    if (source.secret) {
      const name = source.secret.name ?? '';
      addData(await reader.readSecret(namespace, name), source.secret.items, `secret ${name}`, source.secret.optional);
    }
    if (source.configMap) {
      const name = source.configMap.name ?? '';
      addData(await reader.readConfigMap(namespace, name), source.configMap.items, `configmap ${name}`, source.configMap.optional);
    }
    for (const item of source.downwardAPI?.items ?? []) {
      if (item.fieldRef) files.set(item.path, { data: resolveFieldRef(pod, podIp, item.fieldRef), mode: item.mode });
    }
    if (source.serviceAccountToken) {
      const token = await reader.requestToken(pod, source.serviceAccountToken.audience, source.serviceAccountToken.expirationSeconds ?? 3600);
      files.set(source.serviceAccountToken.path, { data: token, ...tokenFileAccess(pod, volume.projected?.defaultMode) });
    }
  }
  return files;
}
