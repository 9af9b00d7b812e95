import type { Socket as DgramSocket, RemoteInfo } from 'node:dgram';
import { constants as h2c } from 'node:http2';
import type { ClientHttp2Stream, OutgoingHttpHeaders } from 'node:http2';
import { DatagramReader, MAX_DATAGRAM_BYTES, UDP_AUTHORITY_HOST, frameDatagram, writeStreamMeta } from '../../wire/index.js';
import type { EdgeTunnel } from '../tunnels/index.js';
import type { FrontContext } from './front-context.js';

/**
 * The edge's UDP front (docs/protocol.md §4.6): a flow is one public client address:port on one
 * UDP port of a binding, carried by one CONNECT stream of length-prefixed datagrams to an agent
 * that named `tuna-features: udp`. Nothing is buffered without bound: a flow queues a few
 * datagrams while its stream opens, a flow whose stream cannot take more drops, and datagrams past
 * the flow limits are dropped and counted (`tuna_edge_udp_datagrams_dropped_total{reason}`).
 */

/** UdpLimits bound what UDP clients may cost the edge (config `limits.udp`). */
export interface UdpLimits {
  /** a flow with no datagram either way for this long is ended on the edge (the agent has its own) */
  idleTimeoutMs: number;
  /** flows open at once per binding; a datagram of a new flow past it is dropped (`binding-flow-limit`) */
  maxFlowsPerBinding: number;
  /** flows open at once per binding and client address (`address-flow-limit`) */
  maxFlowsPerAddress: number;
  /** datagrams a flow holds while its stream opens (`queue-full` past it) */
  maxQueuedDatagrams: number;
}

/**
 * DEFAULT_UDP_LIMITS: 60 s idle (Envoy's udp_proxy `idle_timeout` default; a client that sends
 * less often opens a new flow, which costs one stream), 1,024 flows per binding, 64 per client
 * address, 16 datagrams queued per opening flow (a DNS or QUIC client's first burst).
 */
export const DEFAULT_UDP_LIMITS: Readonly<UdpLimits> = Object.freeze({ idleTimeoutMs: 60_000, maxFlowsPerBinding: 1024, maxFlowsPerAddress: 64, maxQueuedDatagrams: 16 });

/**
 * MAX_UNSENT_FLOW_BYTES bounds the bytes an open flow's stream may hold unsent (its HTTP/2 window
 * towards the agent is full); past it a datagram is dropped (`queue-full`), as a full router
 * queue drops one: UDP senders expect loss, not an edge that grows.
 */
export const MAX_UNSENT_FLOW_BYTES = 256 << 10;

/** UdpPortTarget is what a UDP socket of the edge serves: one binding's port. */
export interface UdpPortTarget {
  bindingId: string;
  port: number;
}

type FlowState = 'opening' | 'open' | 'closed';

/** UdpFlow is one client address:port's datagrams on one port, and the stream carrying them. */
class UdpFlow {
  state: FlowState = 'opening';
  stream: ClientHttp2Stream | undefined;
  queue: Buffer[] = [];
  readonly timer: NodeJS.Timeout;

  constructor(
    readonly key: string,
    readonly remote: RemoteInfo,
    idleMs: number,
    onIdle: () => void,
  ) {
    this.timer = setTimeout(onIdle, idleMs);
    this.timer.unref();
  }
}

/** UdpFront relays the datagrams of every UDP socket the edge opened for bindings. */
export class UdpFront {
  readonly #ctx: FrontContext;
  readonly #limits: UdpLimits;
  readonly #flowsByBinding = new Map<string, number>();
  readonly #flowsByAddress = new Map<string, number>();
  readonly #ports = new Set<UdpPort>();

  constructor(ctx: FrontContext, limits: UdpLimits) {
    this.#ctx = ctx;
    this.#limits = limits;
  }

  /** serve relays the datagrams arriving on `socket` for `target` until the socket closes. */
  serve(socket: DgramSocket, target: UdpPortTarget): void {
    const port = new UdpPort(this, socket, target);
    this.#ports.add(port);
    socket.on('message', (msg, remote) => port.receive(msg, remote));
    socket.once('close', () => {
      this.#ports.delete(port);
      port.closeAll('listener-closed');
    });
  }

  /** destroy ends every flow (the edge stops). */
  destroy(): void {
    for (const port of this.#ports) port.closeAll('edge-closed');
  }

  /** ctx is what the fronts share (registry, metrics, request ids). */
  get ctx(): FrontContext {
    return this.#ctx;
  }

  /** limits are the UDP flow limits in force. */
  get limits(): UdpLimits {
    return this.#limits;
  }

  /** admit takes a flow slot of the binding and the client address, or says which limit is full. */
  admit(bindingId: string, address: string): 'binding-flow-limit' | 'address-flow-limit' | undefined {
    const addressKey = `${bindingId}|${address}`;
    const byBinding = this.#flowsByBinding.get(bindingId) ?? 0;
    if (byBinding >= this.#limits.maxFlowsPerBinding) return 'binding-flow-limit';
    const byAddress = this.#flowsByAddress.get(addressKey) ?? 0;
    if (byAddress >= this.#limits.maxFlowsPerAddress) return 'address-flow-limit';
    this.#flowsByBinding.set(bindingId, byBinding + 1);
    this.#flowsByAddress.set(addressKey, byAddress + 1);
    return undefined;
  }

  /** release gives a flow slot back. */
  release(bindingId: string, address: string): void {
    decrement(this.#flowsByBinding, bindingId);
    decrement(this.#flowsByAddress, `${bindingId}|${address}`);
  }
}

/** UdpPort is one UDP socket's flows. */
class UdpPort {
  readonly #flows = new Map<string, UdpFlow>();

  constructor(
    readonly front: UdpFront,
    readonly socket: DgramSocket,
    readonly target: UdpPortTarget,
  ) {}

  /** receive handles one datagram of a public client. */
  receive(msg: Buffer, remote: RemoteInfo): void {
    const { metrics } = this.front.ctx;
    // IPv6 payloads may reach 65,527 bytes; the framing carries 65,507 at most
    if (msg.length > MAX_DATAGRAM_BYTES) return metrics.countUdpDrop('too-large');
    const key = `${remote.address}|${remote.port}`;
    let flow = this.#flows.get(key);
    if (flow === undefined) {
      if (this.front.ctx.isClosing()) return metrics.countUdpDrop('closing');
      const full = this.front.admit(this.target.bindingId, remote.address);
      if (full !== undefined) return metrics.countUdpDrop(full);
      flow = this.#open(key, remote);
    }
    metrics.countUdpDatagram('in');
    flow.timer.refresh();
    if (flow.state === 'opening') {
      if (flow.queue.length >= this.front.limits.maxQueuedDatagrams) return metrics.countUdpDrop('queue-full');
      flow.queue.push(frameDatagram(msg));
      return;
    }
    const stream = flow.stream!;
    if (stream.writableLength > MAX_UNSENT_FLOW_BYTES) return metrics.countUdpDrop('queue-full');
    stream.write(frameDatagram(msg));
  }

  /** closeAll ends every flow of this socket (it closed, or the edge stops). */
  closeAll(cause: string): void {
    for (const flow of [...this.#flows.values()]) this.#close(flow, cause, h2c.NGHTTP2_CANCEL);
  }

  #open(key: string, remote: RemoteInfo): UdpFlow {
    const { metrics } = this.front.ctx;
    const flow = new UdpFlow(key, remote, this.front.limits.idleTimeoutMs, () => this.#close(flow, 'idle', h2c.NGHTTP2_NO_ERROR));
    this.#flows.set(key, flow);
    metrics.udpFlowsTotal++;
    metrics.udpFlowsActive++;
    void this.#connect(flow).catch(() => this.#close(flow, 'error', h2c.NGHTTP2_INTERNAL_ERROR));
    return flow;
  }

  async #connect(flow: UdpFlow): Promise<void> {
    const tunnel = await findUdpTunnel(this.front, this.target.bindingId);
    if (flow.state === 'closed') return;
    const { ctx } = this.front;
    // an agent of the binding is up but none names `udp` (an older one): told apart in the counts
    if (tunnel === undefined) return this.#close(flow, ctx.registry.pick(this.target.bindingId) === undefined ? 'no-tunnel' : 'no-udp-agent', h2c.NGHTTP2_CANCEL);
    const headers: OutgoingHttpHeaders = { ':method': 'CONNECT', ':authority': `${UDP_AUTHORITY_HOST}:${this.target.port}` };
    writeStreamMeta(headers, { publicPort: this.target.port, publicProtocol: 'udp', clientAddress: flow.remote.address, requestId: ctx.requestId() });
    const stream = tunnel.request(headers);
    flow.stream = stream;
    ctx.metrics.streamsTotal++;
    ctx.metrics.streamsActive++;
    stream.on('error', () => undefined);
    stream.once('close', () => {
      ctx.metrics.streamsActive--;
      this.#close(flow, stream.rstCode === h2c.NGHTTP2_NO_ERROR ? 'agent-end' : 'agent-reset', h2c.NGHTTP2_NO_ERROR);
    });
    stream.once('response', (response) => {
      const status = Number(response[':status']);
      if (status < 200 || status > 299) return this.#close(flow, 'refused', h2c.NGHTTP2_CANCEL);
      this.#relay(flow, stream);
    });
  }

  #relay(flow: UdpFlow, stream: ClientHttp2Stream): void {
    if (flow.state === 'closed') return;
    flow.state = 'open';
    for (const frame of flow.queue) stream.write(frame);
    flow.queue = [];
    const reader = new DatagramReader();
    const { metrics } = this.front.ctx;
    const send = (d: Buffer): void => {
      if (flow.state === 'closed') return;
      flow.timer.refresh();
      metrics.countUdpDatagram('out');
      try {
        this.socket.send(d, flow.remote.port, flow.remote.address);
      } catch {
        // the socket closed (its binding went) with DATA still arriving: send throws ERR_SOCKET_DGRAM_NOT_RUNNING
        this.#close(flow, 'listener-closed', h2c.NGHTTP2_CANCEL);
      }
    };
    stream.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk, send);
      } catch {
        // a malformed length ends this flow's stream only; the tunnel and other flows carry on
        this.#close(flow, 'malformed', h2c.NGHTTP2_PROTOCOL_ERROR);
      }
    });
    // END_STREAM from the agent (its idle timeout): the flow is over
    stream.once('end', () => this.#close(flow, 'agent-end', h2c.NGHTTP2_NO_ERROR));
  }

  #close(flow: UdpFlow, cause: string, code: number): void {
    if (flow.state === 'closed') return;
    const { metrics } = this.front.ctx;
    if (flow.state === 'opening') metrics.countUdpDrop(cause === 'no-tunnel' || cause === 'no-udp-agent' ? cause : 'flow-closed', flow.queue.length);
    flow.state = 'closed';
    flow.queue = [];
    clearTimeout(flow.timer);
    this.#flows.delete(flow.key);
    this.front.release(this.target.bindingId, flow.remote.address);
    metrics.udpFlowsActive--;
    metrics.countUdpFlowEnd(cause);
    const { stream } = flow;
    if (stream !== undefined && !stream.closed && !stream.destroyed) stream.close(code);
  }
}

/**
 * findUdpTunnel returns a live tunnel of the binding whose agent takes UDP flows, waiting the
 * configured time for one to connect. An older agent (no `udp` feature) is never sent a flow: it
 * would answer 400 for a protocol it does not know; the datagrams are dropped and counted instead.
 */
async function findUdpTunnel(front: UdpFront, bindingId: string): Promise<EdgeTunnel | undefined> {
  const { registry, limits } = front.ctx;
  const isUdp = (t: EdgeTunnel): boolean => t.canUdp;
  const now = registry.pick(bindingId, undefined, isUdp);
  if (now !== undefined) return now;
  const arrived = await registry.waitFor(bindingId, limits.tunnelWaitMs);
  return arrived?.canUdp === true ? arrived : registry.pick(bindingId, undefined, isUdp);
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
