// api-object-reader.ts — reads the ConfigMaps, Secrets and tokens a pod refers to, as its node.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { VolumeReader } from './pod-volumes.js';

/** ApiObjectReader reads through the apiserver with the node's identity (the Node authorizer allows
 * exactly the objects of pods bound to the node). */
export class ApiObjectReader implements VolumeReader {
  constructor(private readonly core: CoreV1Api) {}

  /** readConfigMap returns data and binaryData (decoded), or undefined when it does not exist. */
  async readConfigMap(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const map = await this.core.readNamespacedConfigMap({ name, namespace }).catch(notFound);
    if (!map) return undefined;
    const binary = Object.entries(map.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]);
    return { ...map.data, ...Object.fromEntries(binary) };
  }

  /** readSecret returns the decoded data, or undefined when it does not exist. */
  async readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const secret = await this.core.readNamespacedSecret({ name, namespace }).catch(notFound);
    if (!secret) return undefined;
    const data = Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]);
    return { ...Object.fromEntries(data), ...secret.stringData };
  }

  /** requestToken asks the TokenRequest API for a token bound to the pod. */
  async requestToken(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string> {
    const response = await this.core.createNamespacedServiceAccountToken({
      name: pod.spec?.serviceAccountName ?? 'default',
      namespace: pod.metadata?.namespace ?? 'default',
      body: {
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds: Math.max(600, expirationSeconds),
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
        },
      },
    });
    return response.status?.token ?? '';
  }
}

function notFound(error: unknown): undefined {
  if ((error as { code?: number }).code === 404) return undefined;
  throw error;
}
