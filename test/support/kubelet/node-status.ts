// node-status.ts — registers this kubelet's Node and keeps it alive: Node status and its Lease.
//
// A real kubelet renews `kube-node-lease/<node>` every 10 s (KEP-589) and posts Node status less
// often; we do both on one 10 s tick, which is all the control plane needs to see a Ready node.
import os from 'node:os';
import { V1MicroTime, type CoordinationV1Api, type CoreV1Api, type V1Lease, type V1Node, type V1NodeStatus } from '@kubernetes/client-node';

/** NodeIdentity names the node and says where its kubelet API listens. */
export interface NodeIdentity {
  readonly name: string;
  readonly kubeletPort: number;
  readonly kubeletVersion: string;
}

const LEASE_NAMESPACE = 'kube-node-lease';
const LEASE_SECONDS = 40;

/** buildNodeStatus is the Ready status with this machine's capacity and the loopback address. */
export function buildNodeStatus(identity: NodeIdentity, now: Date): V1NodeStatus {
  const capacity = {
    cpu: String(os.cpus().length),
    memory: `${Math.floor(os.totalmem() / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return {
    capacity,
    allocatable: capacity,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'tuna test kubelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: identity.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: identity.kubeletPort } },
    nodeInfo: {
      machineID: identity.name,
      systemUUID: identity.name,
      bootID: String(process.pid),
      kernelVersion: os.release(),
      osImage: 'tuna test kubelet',
      containerRuntimeVersion: 'tuna://0.1.0',
      kubeletVersion: identity.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    },
  };
}

/** registerNode creates the Node (or takes over an existing one) and posts a Ready status. */
export async function registerNode(core: CoreV1Api, identity: NodeIdentity): Promise<void> {
  const node: V1Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: identity.name,
      labels: { 'kubernetes.io/hostname': identity.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
    },
  };
  try {
    await core.createNode({ body: node });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  await postNodeStatus(core, identity);
}

/** postNodeStatus replaces the Node's status with a fresh heartbeat. */
export async function postNodeStatus(core: CoreV1Api, identity: NodeIdentity): Promise<void> {
  const current = await core.readNode({ name: identity.name });
  const previous = new Map((current.status?.conditions ?? []).map((c) => [c.type, c]));
  const status = buildNodeStatus(identity, new Date());
  for (const condition of status.conditions ?? []) {
    const before = previous.get(condition.type);
    if (before?.status === condition.status && before.lastTransitionTime) condition.lastTransitionTime = before.lastTransitionTime;
  }
  await core.replaceNodeStatus({ name: identity.name, body: { ...current, status } });
}

/** renewLease creates or renews the node's Lease. */
export async function renewLease(coordination: CoordinationV1Api, identity: NodeIdentity, nodeUid: string): Promise<void> {
  const spec = {
    holderIdentity: identity.name,
    leaseDurationSeconds: LEASE_SECONDS,
    renewTime: new V1MicroTime(),
  };
  let current: V1Lease | undefined;
  try {
    current = await coordination.readNamespacedLease({ name: identity.name, namespace: LEASE_NAMESPACE });
  } catch (error) {
    if ((error as { code?: number }).code !== 404) throw error;
  }
  if (current) {
    await coordination.replaceNamespacedLease({
      name: identity.name,
      namespace: LEASE_NAMESPACE,
      body: { ...current, spec: { ...current.spec, ...spec } },
    });
    return;
  }
  await coordination.createNamespacedLease({
    namespace: LEASE_NAMESPACE,
    body: {
      metadata: {
        name: identity.name,
        namespace: LEASE_NAMESPACE,
        // Owned by the Node, as the kubelet does, so deleting the Node collects its Lease.
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: identity.name, uid: nodeUid }],
      },
      spec,
    },
  });
}
