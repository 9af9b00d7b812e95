import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import { translateObjects } from '../../src/agent/state.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// A Gateway UDPRoute end to end: the translator's graph (a UDP listener on the Gateway's address,
// weighted udp backends, the oldest of two routes) in the agent's data plane, behind the edge's UDP
// socket of that address, to UDP echo servers on loopback that say who answered.

const ADDRESS = '127.77.0.54';
const GW = 'gateway.networking.k8s.io';
const meta = (name: string, namespace: string, created = '2026-01-01T00:00:00Z') => ({ name, namespace, uid: `uid-${name}`, generation: 1, creationTimestamp: created });

/** Echo is a UDP server that answers every datagram with `<name>:<datagram>`. */
interface Echo {
  name: string;
  socket: DgramSocket;
  port: number;
}

async function startEcho(name: string): Promise<Echo> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, remote) => socket.send(Buffer.from(`${name}:${String(msg)}`), remote.port, remote.address));
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { name, socket, port: socket.address().port };
}

/** freeUdpPort finds a UDP port free on the address (bound and closed at once). */
async function freeUdpPort(address: string): Promise<number> {
  const probe = createSocket('udp4');
  probe.bind(0, address);
  await once(probe, 'listening');
  const port = probe.address().port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** sliceOf is the EndpointSlice of a Service's UDP port 8080, served by the echo server on loopback. */
function sliceOf(echo: Echo): unknown {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${echo.name}-x`, namespace: 'infra', labels: { 'kubernetes.io/service-name': echo.name } },
    addressType: 'IPv4',
    ports: [{ name: 'udp', port: echo.port, protocol: 'UDP' }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  };
}

/** objectsFor is a Gateway with one UDP listener, two UDPRoutes on it and the Services they name. */
function objectsFor(port: number): unknown[] {
  const service = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(name, 'infra'), spec: { ports: [{ name: 'udp', port: 8080, protocol: 'UDP' }] } });
  const route = (name: string, created: string, backendRefs: unknown[]) => ({
    apiVersion: `${GW}/v1`,
    kind: 'UDPRoute',
    metadata: meta(name, 'infra', created),
    spec: { parentRefs: [{ name: 'gw', sectionName: 'udp' }], rules: [{ backendRefs }] },
  });
  return [
    { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
    { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'tuna', listeners: [{ name: 'udp', protocol: 'UDP', port }] } },
    route('older', '2026-01-01T00:00:01Z', [{ name: 'one', port: 8080, weight: 1 }, { name: 'off', port: 8080, weight: 0 }]),
    route('newer', '2026-01-01T00:00:09Z', [{ name: 'two', port: 8080 }]),
    service('one'),
    service('two'),
    service('off'),
  ];
}

describe('Gateway UDPRoute through the edge and the agent data plane', function () {
  this.timeout(30_000);
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;
  const sockets: DgramSocket[] = [];

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.close();
    session?.destroy();
    await t?.edge.close();
    t = undefined;
    session = undefined;
  });

  it('answers each flow from the oldest route\'s weighted backend, never from a weight-0 one or the newer route', async () => {
    const echoes = await Promise.all(['one', 'two', 'off'].map(startEcho));
    sockets.push(...echoes.map((e) => e.socket));
    const port = await freeUdpPort(ADDRESS);
    // the endpoints come from EndpointSlices with UDP ports, as the operator's do
    const { graph, endpoints } = translateObjects([...objectsFor(port), ...echoes.map(sliceOf)]);
    const binding = graph.bindings.find((b) => b.kind === 'address');
    expect(binding?.id).to.equal('binding/address/infra/gw');
    expect(graph.listeners.map((l) => `${l.protocol}/${l.port}`)).to.deep.equal([`udp/${port}`]);
    t = await startTestEdge([{ id: binding!.id, kind: 'address', address: ADDRESS, ports: [{ port, protocol: 'udp' }] }], { limits: { tunnelWaitMs: 500 } });
    const dp = new DataPlane({ endpoints: new StaticEndpointResolver(endpoints) });
    dp.update(graph);
    session = await openSession(t, binding!.id, dp);

    // eight client sockets are eight flows: a backend is chosen per flow
    const answers: string[] = [];
    for (let i = 0; i < 8; i++) {
      const client = createSocket('udp4');
      sockets.push(client);
      client.on('message', (msg: Buffer) => answers.push(String(msg)));
      client.bind(0, '127.0.0.1');
      await once(client, 'listening');
      await new Promise<void>((resolve, reject) => client.send(`flow${i}`, port, ADDRESS, (err) => (err ? reject(err) : resolve())));
    }
    await waitUntil(() => answers.length >= 8, 10_000);
    expect(answers.map((a) => a.split(':')[0])).to.deep.equal(Array(8).fill('one'));
    expect(answers.map((a) => a.split(':')[1]).sort()).to.deep.equal(Array.from({ length: 8 }, (_, i) => `flow${i}`));
  });
});
