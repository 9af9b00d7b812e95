// pod-network.ts — one network namespace per pod, joined to a host bridge by a veth pair.
//
// Why a bridge: the host (tests, the apiserver's clients) reaches every pod IP directly, and pods
// reach each other on one L2 segment, with no NAT and no iptables. Addresses come from
// 198.18.0.0/15 (RFC 2544 benchmarking range), the only non-loopback range our tests may use.
import { runCommand, runCommandQuietly } from './run-command.js';

/** POD_NETWORK_PREFIX is the first two octets of pod addresses; the bridge holds .0.1. */
export const POD_NETWORK_PREFIX = '198.18';
/** BRIDGE_NAME is the host bridge every pod's veth is attached to. */
export const BRIDGE_NAME = 'tk-br0';
/** NETNS_PREFIX starts the name of every network namespace this kubelet creates. */
export const NETNS_PREFIX = 'tuna-kubelet-';
/** VETH_PREFIX starts the host-side name of every veth this kubelet creates. */
export const VETH_PREFIX = 'tk-';

const GATEWAY = `${POD_NETWORK_PREFIX}.0.1`;
/**
 * BRIDGE_MAC is the bridge's own, fixed, locally administered address ("tuna" in its middle
 * bytes). A Linux bridge whose address was never set takes the lowest address among its ports,
 * so a pod's veth joining or leaving could change it: every pod's ARP entry for the gateway then
 * points at an address the bridge no longer answers to, and all their connections to the host
 * stall together until those entries expire (seen as every tunnel of a rolling upgrade dropping
 * at once). An address set explicitly stays (CNI's bridge plugin pins it for the same reason).
 */
export const BRIDGE_MAC = '02:74:75:6e:61:01';
const PREFIX_LENGTH = 16;

/** PodNetwork is the network of one pod: its namespace, host veth and address. */
export interface PodNetwork {
  readonly netns: string;
  readonly hostVeth: string;
  readonly ip: string;
}

/** FIRST_HOST and LAST_HOST bound the pod addresses by their last two octets: .0.2 to .255.254. */
const FIRST_HOST = 2;
const LAST_HOST = 65_534;

/**
 * IpAllocator hands out pod addresses from 198.18.0.2 upwards, round-robin: the next free one after
 * the last handed out, so a released address comes back only after the rest of the range (as CNI's
 * host-local IPAM does). Handing the lowest free one out again at once gave a new pod the address of
 * a pod just deleted, so anything still aimed at the old pod (a pooled connection, a UDP flow, a
 * neighbour entry) met the new one; round-robin keeps a test's backends apart from the last test's.
 */
export class IpAllocator {
  private readonly used = new Set<number>();
  private last = FIRST_HOST - 1;

  /** allocate returns a free address. */
  allocate(): string {
    for (let i = 0; i <= LAST_HOST - FIRST_HOST; i++) {
      const n = FIRST_HOST + ((this.last - FIRST_HOST + 1 + i) % (LAST_HOST - FIRST_HOST + 1));
      if (!this.used.has(n)) {
        this.used.add(n);
        this.last = n;
        return `${POD_NETWORK_PREFIX}.${n >> 8}.${n & 255}`;
      }
    }
    throw new Error('pod address range exhausted');
  }

  /** release returns an address to the pool. */
  release(ip: string): void {
    const [, , a, b] = ip.split('.').map(Number);
    this.used.delete(((a ?? 0) << 8) + (b ?? 0));
  }
}

/** ensureBridge creates the host bridge with the gateway address if it is missing. */
export async function ensureBridge(): Promise<void> {
  const links = await runCommand('ip', ['-o', 'link', 'show']);
  if (!links.includes(` ${BRIDGE_NAME}:`)) {
    await runCommand('ip', ['link', 'add', BRIDGE_NAME, 'address', BRIDGE_MAC, 'type', 'bridge']);
    await runCommand('ip', ['addr', 'add', `${GATEWAY}/${PREFIX_LENGTH}`, 'dev', BRIDGE_NAME]);
  }
  // a bridge left by an earlier kubelet gets its address set too
  await runCommand('ip', ['link', 'set', BRIDGE_NAME, 'address', BRIDGE_MAC, 'up']);
}

/** removeBridge deletes the host bridge (pods' veths are gone with their namespaces). */
export async function removeBridge(): Promise<void> {
  await runCommandQuietly('ip', ['link', 'del', BRIDGE_NAME]);
}

/** podNetworkNames are the namespace and host veth names of a pod (veth names are ≤ 15 bytes). */
export function podNetworkNames(podUid: string): { netns: string; hostVeth: string } {
  const id = podUid.replace(/-/g, '').slice(0, 10);
  return { netns: `${NETNS_PREFIX}${id}`, hostVeth: `${VETH_PREFIX}${id}` };
}

/** createPodNetwork makes the namespace, the veth pair, the address and the default route. */
export async function createPodNetwork(podUid: string, ip: string): Promise<PodNetwork> {
  const names = podNetworkNames(podUid);
  const id = names.netns.slice(NETNS_PREFIX.length);
  const network = { ...names, ip };
  const peer = `tkp-${id}`;
  const inNs = (...args: string[]) => runCommand('ip', ['-n', network.netns, ...args]);
  await runCommand('ip', ['netns', 'add', network.netns]);
  try {
    await runCommand('ip', ['link', 'add', network.hostVeth, 'type', 'veth', 'peer', 'name', peer]);
    await runCommand('ip', ['link', 'set', peer, 'netns', network.netns]);
    await runCommand('ip', ['link', 'set', network.hostVeth, 'master', BRIDGE_NAME, 'up']);
    await inNs('link', 'set', peer, 'name', 'eth0');
    await inNs('addr', 'add', `${ip}/${PREFIX_LENGTH}`, 'dev', 'eth0');
    await inNs('link', 'set', 'eth0', 'up');
    await inNs('link', 'set', 'lo', 'up');
    await inNs('route', 'add', 'default', 'via', GATEWAY);
    // an address used before (after the range wrapped, or by an earlier kubelet) may still have a
    // neighbour entry naming the old pod's MAC: drop it, so the host asks again
    await runCommandQuietly('ip', ['neigh', 'flush', 'to', ip, 'dev', BRIDGE_NAME]);
  } catch (error) {
    await removePodNetwork(network);
    throw error;
  }
  return network;
}

/** removePodNetwork kills what still runs in the namespace and deletes it and its veth. */
export async function removePodNetwork(network: Pick<PodNetwork, 'netns' | 'hostVeth'>): Promise<void> {
  const pids = await runCommand('ip', ['netns', 'pids', network.netns]).catch(() => '');
  for (const pid of pids.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already exited
    }
  }
  await runCommandQuietly('ip', ['link', 'del', network.hostVeth]);
  await runCommandQuietly('ip', ['netns', 'del', network.netns]);
}

/** listOurNetns lists the namespaces this kubelet (or an earlier, crashed one) created. */
export async function listOurNetns(): Promise<string[]> {
  const out = await runCommand('ip', ['netns', 'list']).catch(() => '');
  return out
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(NETNS_PREFIX));
}
