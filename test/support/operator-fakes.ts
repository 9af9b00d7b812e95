import type { KubernetesObject } from '@kubernetes/client-node';
import type { TunnelControl } from '../../src/agent/index.js';
import type { Binding } from '../../src/model/index.js';
import type { ObjectSource } from '../../src/operator/index.js';

/** RecordingTunnels is a TunnelControl that holds nothing and records the binding ids of each apply. */
export class RecordingTunnels implements TunnelControl {
  applied: string[][] = [];
  apply(bindings: readonly Binding[]): Promise<void> {
    this.applied.push(bindings.map((b) => b.id));
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** ListedObjects is an object cache that has listed every kind and holds what the test gives it. */
export class ListedObjects implements ObjectSource {
  items: KubernetesObject[] = [];
  onChange(_callback: () => void): void {}
  start(): Promise<void> {
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  objects(): KubernetesObject[] {
    return this.items;
  }
  hasSynced(): boolean {
    return true;
  }
  hasListed(): boolean {
    return true;
  }
  absentKinds(): string[] {
    return [];
  }
}

/** ChangingObjects is a listed cache whose test fires the change callback by hand. */
export class ChangingObjects extends ListedObjects {
  #listeners: (() => void)[] = [];
  override onChange(callback: () => void): void {
    this.#listeners.push(callback);
  }
  change(): void {
    for (const l of this.#listeners) l();
  }
}

/** lbService is a Service tuna publishes (LoadBalancer, class tuna) as the hostname `<name>-default.<base domain>`. */
export function lbService(name: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'http', port: 80, appProtocol: 'http' }] },
  } as KubernetesObject;
}
