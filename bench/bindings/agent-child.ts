/**
 * The agent of the many-bindings memory bench: one TunnelManager (the same class `tuna run` and the
 * operator use) holding N bindings, each with its own key, over a TLS tunnel, either shared
 * (protocol version 2: one connection) or one connection per binding (version 1). Arguments: a
 * JSON file with {edge, ca, mode, bindings: [{id, key}]}. Prints `open` once every binding is
 * served, then `measured` after a full GC whenever its parent writes a line to stdin.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ServerHttp2Stream } from 'node:http2';
import { NetEdgeDialer, StaticKeySource, SystemClock, TunnelManager } from '../../src/tunnel/index.js';
import type { TunnelStreamHandler } from '../../src/wire/index.js';

interface AgentSetup {
  edge: { host: string; port: number };
  ca: string;
  mode: 'shared' | 'per-binding';
  bindings: { id: string; key: string }[];
}

const setup = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as AgentSetup;
const keys = new Map(setup.bindings.map((b) => [b.id, b.key]));
const handler: TunnelStreamHandler = { handleStream: (stream: ServerHttp2Stream) => stream.respond({ ':status': 204 }, { endStream: true }) };
const manager = new TunnelManager(new NetEdgeDialer(), new SystemClock(), handler, new StaticKeySource(keys), { sharedConnections: setup.mode === 'shared' });
const edge = { host: setup.edge.host, port: setup.edge.port, tls: true, servername: 'localhost', ca: setup.ca };
manager.apply(setup.bindings.map((b) => ({ bindingId: b.id, edges: [edge], keyRef: b.id })));
for (let i = 0; i < 1200; i++) {
  if (manager.status().every((s) => s.open === 1)) break;
  await new Promise((r) => setTimeout(r, 100));
}
const open = manager.status().filter((s) => s.open === 1).length;
console.log(open === setup.bindings.length ? 'open' : `stuck ${open}`);
const gc = (globalThis as { gc?: () => void }).gc;
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'quit') break;
  gc?.();
  const m = process.memoryUsage();
  console.log(`measured ${m.heapUsed} ${m.heapTotal} ${m.external}`);
}
manager.destroy();
