import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { translateObjects } from '../../src/agent/state.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openStore } from '../../src/edge/store/index.js';
import { withEdgeIds } from '../../src/operator/index.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { StaticKeySource } from '../../src/tunnel/key-source.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { countOf, scrapeWorkers, startEdgeProcess, stopEdgeProcess } from '../support/edge-process.js';
import type { EdgeProcess } from '../support/edge-process.js';
import { BASE_DOMAIN, api, reserveAndMint, seedAccount } from '../support/edge-store-harness.js';
import type { MintedTunnel } from '../support/edge-store-harness.js';

/**
 * A Gateway's UDP port on an edge of two worker processes (`tuna edge --workers 2`), when the
 * address is released by one Gateway and reserved again by the next, as the conformance suite's
 * UDPRoute tests do one after the other (docs/conformance.md). The edge is a real process (its
 * primary forks the workers, which share every UDP socket of the address through node:cluster);
 * the agent is a TunnelManager with shared connections (one per worker) and a data plane in this
 * process, serving the translator's graph of a Gateway with one UDP listener. Counts, not timings:
 * each probe is a fresh client socket (a new flow, as the suite's are) that must be answered.
 */

const GW = 'gateway.networking.k8s.io';
const PROBE_TIMEOUT_MS = 2000;

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

/** randomAddress is a loopback address of the edge tests' range that no fixed test uses. */
function randomAddress(): string {
  return `127.77.${200 + Math.floor(Math.random() * 50)}.${1 + Math.floor(Math.random() * 254)}`;
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

/** gatewayObjects is a Gateway `name` with one UDP listener on `port`, a UDPRoute to Service `name`, and its endpoint (the echo). */
function gatewayObjects(name: string, port: number, echo: Echo): unknown[] {
  const meta = { name, namespace: 'infra', uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' };
  return [
    { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
    { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta, spec: { gatewayClassName: 'tuna', listeners: [{ name: 'udp', protocol: 'UDP', port }] } },
    { apiVersion: `${GW}/v1`, kind: 'UDPRoute', metadata: meta, spec: { parentRefs: [{ name, sectionName: 'udp' }], rules: [{ backendRefs: [{ name, port: 8080 }] }] } },
    { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { ports: [{ name: 'udp', port: 8080, protocol: 'UDP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-x`, namespace: 'infra', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'udp', port: echo.port, protocol: 'UDP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
  ];
}

/** probe sends one datagram from a fresh socket and resolves with the answer, or undefined after PROBE_TIMEOUT_MS. */
async function probe(address: string, port: number, text: string): Promise<string | undefined> {
  const client = createSocket('udp4');
  try {
    client.bind(0, '127.0.0.1');
    await once(client, 'listening');
    const answer = once(client, 'message').then(([msg]) => String(msg));
    client.send(text, port, address);
    return await Promise.race([answer, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), PROBE_TIMEOUT_MS).unref())]);
  } finally {
    client.close();
  }
}

/** firstAnswer probes until one is answered by `name`, at most `tries` times; it returns how many probes that took (or tries + 1). */
async function firstAnswer(address: string, port: number, name: string, tries: number): Promise<number> {
  for (let i = 1; i <= tries; i++) {
    if ((await probe(address, port, `first${i}`))?.startsWith(`${name}:`) === true) return i;
  }
  return tries + 1;
}

describe('UDP on an edge of two workers: an address released by one Gateway and reserved by the next', function () {
  this.timeout(120_000);
  let dir: string;
  let edge: EdgeProcess | undefined;
  let manager: TunnelManager | undefined;
  const echoes: Echo[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-udp-workers-'));
  });
  afterEach(async () => {
    manager?.destroy();
    manager = undefined;
    await stopEdgeProcess(edge, 'SIGKILL');
    edge = undefined;
    for (const e of echoes.splice(0)) e.socket.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every fresh flow of the new Gateway from its own backend, on both workers', async () => {
    const store = await openStore(join(dir, 'edge.db'));
    const seeded = await seedAccount(store);
    await store.close();
    const address = randomAddress();
    const port = await freeUdpPort(address);
    const config = join(dir, 'edge.json');
    writeFileSync(config, JSON.stringify({
      workers: 2,
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      store: { url: join(dir, 'edge.db'), baseDomain: BASE_DOMAIN, addressPool: `${address}/32`, addressPortRange: { first: 1024, last: 65535 }, pollMs: 200 },
      limits: { tunnelWaitMs: 2000 },
    }));
    edge = await startEdgeProcess(['--config', config]);
    const [first, second] = [await startEcho('first'), await startEcho('second')];
    echoes.push(first, second);

    const tokens = new Map<string, string>();
    const endpoints = new StaticEndpointResolver();
    const dp = new DataPlane({ endpoints });
    manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dp, new StaticKeySource(tokens), { sharedConnections: true, backoff: { baseMs: 100, maxMs: 400 } });
    const tunnelEdge = [{ host: '127.0.0.1', port: edge.tunnelPort, tls: false }];

    /** serve reserves the address for Gateway `name`, and points the agent's tunnels and data plane at it. */
    const serve = async (name: string, echo: Echo): Promise<MintedTunnel> => {
      const minted = await reserveAndMint(edge!.tunnelPort, seeded.reservationsToken, { kind: 'address', ports: [{ port, protocol: 'udp' }] }, { protocol: 'http' });
      expect(minted.value, 'the pool of one address gives it again').to.equal(address);
      const translated = translateObjects(gatewayObjects(name, port, echo));
      const graph = withEdgeIds(translated.graph, (id) => (id.startsWith('binding/address/') ? minted.bindingId : id));
      endpoints.replace(translated.endpoints);
      dp.update(graph);
      tokens.set(minted.keyId, minted.token);
      manager!.apply([{ bindingId: minted.bindingId, edges: tunnelEdge, keyRef: minted.keyId }]);
      return minted;
    };

    const a = await serve('first', first);
    expect(await firstAnswer(address, port, 'first', 20), 'the first Gateway answers').to.be.at.most(20);

    // the first Gateway goes: its tunnels, its key and its reservation (what the operator does)
    manager.apply([]);
    expect((await api(edge.tunnelPort, 'DELETE', `/v1/tunnel-keys/${a.keyId}`, seeded.reservationsToken)).status).to.equal(200);
    expect((await api(edge.tunnelPort, 'DELETE', `/v1/reservations/${a.reservationId}`, seeded.reservationsToken)).status).to.be.oneOf([200, 204]);
    await serve('second', second);

    const tries = await firstAnswer(address, port, 'second', 20);
    expect(tries, 'the second Gateway answers within 20 probes').to.be.at.most(20);
    // then every fresh flow is the second Gateway's, whichever worker reads its datagram
    const answers: (string | undefined)[] = [];
    for (let i = 0; i < 40; i++) answers.push(await probe(address, port, `p${i}`));
    expect(answers.map((x) => x?.split(':')[0] ?? 'no answer')).to.deep.equal(Array(40).fill('second'));
    // each worker holds the new key's tunnel for the address, and no UDP socket failed to bind on the way
    const scrapes = await scrapeWorkers(edge.tunnelPort, 2, { authorization: `Bearer ${seeded.adminToken}` });
    for (const w of [0, 1]) expect(countOf(scrapes.get(w) ?? '', 'tuna_edge_tunnels', `binding="binding/address/${address}"`), `worker ${w}`).to.equal(1);
    expect(edge.out() + edge.stderr()).to.not.contain('cannot bind UDP');
  });
});
