import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { PeerCertificate } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createHttpsTransport } from '../../src/edge/acme/index.js';
import type { AcmeTransport } from '../../src/edge/acme/index.js';

/**
 * Shared pieces of the ACME end-to-end tests: pebble (Let's Encrypt's test CA, through
 * hack/pebble.sh) on loopback ports, and a loopback DNS server that sends pebble's validation
 * connections for `*.edge.test` to 127.0.0.1.
 */

const SCRIPT = fileURLToPath(new URL('../../hack/pebble.sh', import.meta.url));

/** PEBBLE_DOMAIN is the zone the loopback DNS answers: names under it resolve to 127.0.0.1. */
export const PEBBLE_DOMAIN = 'edge.test';

/** installPebble installs Debian's pebble package when it is missing (call from a `before` hook). */
export async function installPebble(): Promise<void> {
  await promisify(execFile)(SCRIPT, ['install'], { timeout: 590_000 });
}

/**
 * startLoopbackDns answers A queries under edge.test with 127.0.0.1 and everything else with no
 * records (RFC 1035 §4.1): pebble validates a challenge by connecting to the address of the name.
 */
export async function startLoopbackDns(): Promise<UdpSocket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString('ascii'));
      offset += query[offset]! + 1;
    }
    const qtype = query.readUInt16BE(offset + 1);
    const questionEnd = offset + 5;
    const isOurs = labels.join('.').toLowerCase().endsWith(PEBBLE_DOMAIN);
    const answer = isOurs && qtype === 1 ? [Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1])] : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(isOurs ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answer]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

/** freePort returns a loopback port that was free a moment ago (pebble must know the edge's port before the edge starts). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Pebble is a running pebble and what a test needs to talk to it. */
export interface Pebble {
  process: ChildProcess;
  /** the CA of pebble's own HTTPS listeners (trust it for the ACME client only) */
  ca: string;
  directoryUrl: string;
  managementUrl: string;
  /** an HTTPS transport that trusts `ca` */
  transport: AcmeTransport;
  /** stop ends the process and waits for it */
  stop(): Promise<void>;
}

/**
 * startPebble runs pebble in `dir`, validating TLS-ALPN-01 on `tlsPort` of the address `dns`
 * gives, and waits (bounded) until its directory answers.
 */
export async function startPebble(dir: string, tlsPort: number, dns: UdpSocket): Promise<Pebble> {
  const [acmePort, managementPort, unusedHttpPort] = [await freePort(), await freePort(), await freePort()];
  const dnsAddress = `127.0.0.1:${(dns.address() as AddressInfo).port}`;
  const args = ['start', dir, String(acmePort), String(managementPort), String(tlsPort), String(unusedHttpPort), dnsAddress];
  const child = spawn(SCRIPT, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  try {
    let ca: string | undefined;
    for (let i = 0; i < 100 && ca === undefined; i++) {
      // ca.pem is written before cert.pem: once cert.pem exists, ca.pem is complete.
      ca = await readFile(join(dir, 'cert.pem'), 'utf8').then(() => readFile(join(dir, 'ca.pem'), 'utf8')).catch(() => undefined);
      if (ca === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (ca === undefined) throw new Error('pebble.sh wrote no CA');
    const transport = createHttpsTransport({ ca });
    const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
    await waitForDirectory(transport, directoryUrl, child);
    return { process: child, ca, directoryUrl, managementUrl: `https://127.0.0.1:${managementPort}`, transport, stop };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}: ${Buffer.concat(output).toString('utf8')}`, { cause: err });
  }
}

// Polls pebble's directory until it answers (bounded: 100 tries, 100 ms apart).
async function waitForDirectory(transport: AcmeTransport, url: string, pebble: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (pebble.exitCode !== null) throw new Error(`pebble exited with ${pebble.exitCode}`);
    const isUp = await transport({ method: 'GET', url }).then((r) => r.status === 200, () => false);
    if (isUp) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('pebble did not start');
}

/** getText GETs a URL through the transport and expects 200 (pebble's management API: roots, intermediates). */
export async function getText(transport: AcmeTransport, url: string): Promise<string> {
  const res = await transport({ method: 'GET', url });
  expect(res.status, url).to.equal(200);
  return res.body.toString('utf8');
}

/** handshake connects with SNI and full verification against `ca`, resolving to the peer chain. */
export function handshake(port: number, servername: string, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, ca, ALPNProtocols: ['http/1.1'] }, () => {
      const peer = socket.getPeerCertificate(true);
      socket.end();
      resolve(peer);
    });
    socket.once('error', reject);
  });
}
