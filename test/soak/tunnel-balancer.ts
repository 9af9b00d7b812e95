// tunnel-balancer.ts — the load balancer in front of the soak's two edge nodes' tunnel listeners.
//
// The operator dials one edge address (--edge); docs/edge.md "PostgreSQL mode" puts a balancer in
// front of the nodes. This one reads each connection's request head. A tunnel upgrade goes to the
// live node holding fewer tunnels of its group (its `tuna-binding`, or for a shared connection,
// protocol version 2, which names no binding, the pod it comes from), so each node gets its share
// of every pod's tunnels; anything else (the control API) goes round-robin. A node that refuses
// the connection is skipped. When a node comes back, the tunnels that moved to the other node stay
// there (the agent keeps a working connection): `rebalance` ends idle tunnels of a group the
// returned node lacks, and the agent dials again, through here.
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { HEADER_BINDING } from '../../src/wire/protocol.js';

/** BalancedNode is one edge node's tunnel listener. */
export interface BalancedNode {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

interface Link {
  readonly node: string;
  /** the binding, or the pod of a shared connection; undefined for the control API */
  readonly group: string | undefined;
  readonly client: Socket;
  readonly upstream: Socket;
  lastByteAt: number;
}

/** MAX_HEAD is the most the balancer reads looking for the end of a request head. */
const MAX_HEAD = 16 * 1024;

/** TunnelBalancer is a TCP balancer over the edge nodes' tunnel listeners. */
export class TunnelBalancer {
  private readonly server: Server;
  private readonly links = new Set<Link>();
  private readonly down = new Set<string>();
  private turn = 0;

  constructor(private readonly nodes: readonly BalancedNode[]) {
    this.server = createServer((client) => this.accept(client));
  }

  /** listen binds host:0 and resolves with the port. */
  async listen(host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, host, () => resolve());
    });
    return (this.server.address() as AddressInfo).port;
  }

  /** setDown marks a node as down (skipped without a connect attempt) or up again. */
  setDown(name: string, isDown: boolean): void {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
  }

  /** tunnels counts the live tunnel connections per group (binding, or pod of shared connections) and node. */
  tunnels(): Map<string, Map<string, number>> {
    const counts = new Map<string, Map<string, number>>();
    for (const link of this.links) {
      if (link.group === undefined) continue;
      const perNode = counts.get(link.group) ?? new Map<string, number>();
      perNode.set(link.node, (perNode.get(link.node) ?? 0) + 1);
      counts.set(link.group, perNode);
    }
    return counts;
  }

  /**
   * rebalance ends, for each group that `node` holds fewer connections of than another node by
   * two or more, one connection of that other node that carried no byte for `idleMs` (so no
   * request is cut); it returns how many it ended. The agent dials again and lands on `node`.
   */
  rebalance(node: string, idleMs: number): number {
    let ended = 0;
    const now = Date.now();
    for (const [group, perNode] of this.tunnels()) {
      const mine = perNode.get(node) ?? 0;
      for (const [other, count] of perNode) {
        if (other === node || count - mine < 2) continue;
        const idle = [...this.links].find((l) => l.group === group && l.node === other && now - l.lastByteAt >= idleMs);
        if (idle === undefined) continue;
        idle.client.destroy();
        idle.upstream.destroy();
        ended++;
        break;
      }
    }
    return ended;
  }

  /** close stops listening and ends every connection. */
  async close(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    let head = Buffer.alloc(0);
    client.on('error', () => undefined);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0 && head.length < MAX_HEAD) return;
      client.off('data', onData);
      client.pause();
      const group = groupOf(head.subarray(0, end < 0 ? head.length : end).toString('latin1'), client.remoteAddress ?? '');
      this.forward(client, head, group, this.order(group));
    };
    client.on('data', onData);
  }

  /** order lists the live nodes, the preferred first: fewest tunnels of the group, else round-robin. */
  private order(group: string | undefined): BalancedNode[] {
    const live = this.nodes.filter((n) => !this.down.has(n.name));
    const start = this.turn++ % Math.max(live.length, 1);
    const rotated = [...live.slice(start), ...live.slice(0, start)];
    if (group === undefined) return rotated;
    const perNode = this.tunnels().get(group) ?? new Map<string, number>();
    return rotated.sort((a, b) => (perNode.get(a.name) ?? 0) - (perNode.get(b.name) ?? 0));
  }

  private forward(client: Socket, head: Buffer, group: string | undefined, candidates: BalancedNode[]): void {
    const [node, ...rest] = candidates;
    if (node === undefined || client.destroyed) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: node.host, port: node.port });
    upstream.on('error', () => {
      if (link.isConnected) client.destroy();
      else this.forward(client, head, group, rest);
    });
    const link = { node: node.name, group, client, upstream, lastByteAt: Date.now(), isConnected: false };
    upstream.once('connect', () => {
      link.isConnected = true;
      this.links.add(link);
      const touch = (): void => {
        link.lastByteAt = Date.now();
      };
      upstream.on('data', touch);
      client.on('data', touch);
      upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      const end = (): void => {
        this.links.delete(link);
        client.destroy();
        upstream.destroy();
      };
      client.once('close', end);
      upstream.once('close', end);
    });
  }
}

/** groupOf is a tunnel upgrade's group: its `tuna-binding`, else (a shared connection) the pod it comes from; undefined for anything else. */
function groupOf(head: string, from: string): string | undefined {
  let binding: string | undefined;
  let isUpgrade = false;
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (name === HEADER_BINDING) binding = line.slice(colon + 1).trim();
    if (name === 'upgrade') isUpgrade = true;
  }
  return isUpgrade ? (binding ?? `shared from ${from}`) : undefined;
}
