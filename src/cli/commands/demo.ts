import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as t from 'io-ts';
import { startDemoBackend, endpointSlicesFor } from '../demo-backends.js';
import type { DemoBackend } from '../demo-backends.js';
import { PortOrZeroString, decodeFlags, parseFlags } from '../flags.js';
import { FileProvider } from '../file-provider.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { CliRuntime, RunningEdge } from '../runtime.js';
import type { Agent } from '../../agent/index.js';
import { packageRoot } from '../package-root.js';
import { pick } from './http.js';

/** demoManifests is examples/demo, found from this file in src/, in dist/ and in the bundle alike. */
export const demoManifests = join(packageRoot(import.meta.url), 'examples', 'demo');

const DEMO_HOST = 'demo.localhost';
const DEMO_BINDING = `binding/host/${DEMO_HOST}`;

const DemoFlags = t.partial({ port: PortOrZeroString });

/**
 * demoEdgeConfig is the embedded edge's configuration: loopback only, plaintext tunnel listener
 * (nothing leaves the machine), one binding whose only key is the one generated for this run;
 * the edge stores its SHA-256 digest, never the key.
 */
export function demoEdgeConfig(key: string, httpPort: number): unknown {
  return {
    listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: httpPort } },
    bindings: [
      {
        id: DEMO_BINDING,
        kind: 'host',
        hostnames: [DEMO_HOST],
        keys: [{ id: 'demo', sha256: createHash('sha256').update(key).digest('hex') }],
      },
    ],
  };
}

/**
 * demoCommand runs the demo: an edge, two sample backends and the file provider over
 * examples/demo (plus the EndpointSlices of the backends' ports), then waits for Ctrl-C/SIGTERM
 * and stops everything in reverse order.
 */
export async function demoCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, { port: { type: 'string' }, ...logFlagOptions }, 'demo');
  if (parsed.values.help === true) return (io.out(commandHelp.demo!), 0);
  const flags = decodeFlags(DemoFlags, pick(parsed.values, ['port']), 'demo');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'demo'));
  const stack: (() => Promise<unknown>)[] = [];
  const unwind = async (): Promise<void> => {
    for (const close of stack.reverse()) await close().catch(() => undefined);
  };
  try {
    // Prefixed like every tuna key, so it never starts with '-' if someone passes it on a command line.
    const key = `tuna_demo_${randomBytes(32).toString('base64url')}`;
    const backends: DemoBackend[] = [await startDemoBackend('api'), await startDemoBackend('web')];
    for (const b of backends) stack.push(() => b.close());
    const edge: RunningEdge = await runtime.startEdge(demoEdgeConfig(key, flags.port ?? 0));
    let edgeClosed: Promise<void> | undefined;
    const closeEdge = (): Promise<void> => (edgeClosed ??= edge.close());
    stack.push(closeEdge);
    const generated = await mkdtemp(join(tmpdir(), 'tuna-demo-'));
    stack.push(() => rm(generated, { recursive: true, force: true }));
    await writeFile(join(generated, 'endpointslices.yaml'), endpointSlicesFor(backends));
    const provider = new FileProvider([demoManifests, generated], log);
    const state = await provider.read();
    provider.report(state);
    const agent: Agent = runtime.createAgent({ edge: { host: '127.0.0.1', port: edge.tunnelPort, tls: false }, key, connections: 1 }, provider.endpoints, provider.certificates, (line) => log.warn(line));
    stack.push(() => agent.close());
    // Stopping: the edge drains first (public requests in flight finish, then it sends GOAWAY on
    // the tunnel), so the agent finds its tunnel already closed; backends stop last.
    stack.push(closeEdge);
    await agent.apply(state.graph);
    provider.watch(agent);
    stack.push(() => provider.close());
    const port = edge.httpPort ?? 0;
    log.info(
      [
        `\ntuna demo is up (edge, 2 backends, 1 tunnel; all on 127.0.0.1).`,
        `  URL:   http://${DEMO_HOST}:${port}/`,
        `  try:   curl -H 'Host: ${DEMO_HOST}' http://127.0.0.1:${port}/api/hello`,
        `         curl -H 'Host: ${DEMO_HOST}' http://127.0.0.1:${port}/`,
        `Press Ctrl-C to stop.`,
      ].join('\n'),
      { url: `http://${DEMO_HOST}:${port}/`, httpPort: port },
    );
    const signal = await io.stopSignal;
    log.notice(`${signal}: stopping the demo`, { signal });
    return 0;
  } finally {
    await unwind();
  }
}
