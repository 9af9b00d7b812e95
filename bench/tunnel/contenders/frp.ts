/**
 * frp (github.com/fatedier/frp): frps on loopback, frpc dialing it, built by hack/bench-tools.sh.
 *
 * Mode `http` is the fair match for tuna's HTTP tunnels: frps parses each request and routes it by
 * Host (vhost) into a multiplexed connection frpc dialed, as tuna's edge routes by Host into the
 * agent's HTTP/2 connection. Mode `tcp` is frp's cheapest path (bytes copied, no HTTP parsing), shown
 * for scale. Both keep frp's defaults: TLS on the control/work connections (the default since
 * v0.50) and yamux multiplexing, as tuna's tunnel runs TLS and HTTP/2.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Contender, MemoryFigure } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import { rssBytes } from '../memory.js';
import type { Target } from '../net.js';
import { freePort, loopback, waitForListening, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';

/**
 * workPool is how many work connections frpc keeps open ahead of need (frp's documented tuning knob,
 * `transport.poolCount`, capped by frps's `transport.maxPoolCount`). frps's HTTP vhost keeps only 5
 * idle upstream connections per host (hard-coded `MaxIdleConnsPerHost: 5` in pkg/util/vhost), so
 * under 64 concurrent clients it asks for a new work connection for most requests; the pool makes
 * that a local hand-off instead of a round trip to frpc: frp at its best, not at its defaults.
 */
export const workPool = 64;

/** FrpMode is how frp carries the traffic: HTTP vhost routing or a raw TCP port. */
export type FrpMode = 'http' | 'tcp';

/** FrpProxy is one `[[proxies]]` entry of frpc's config. */
export interface FrpProxy {
  name: string;
  /** the Host it serves (http) */
  domain?: string;
  /** the port frps opens for it (tcp) */
  remotePort?: number;
}

/** frpsConfig is frps's TOML: loopback only, a vhost HTTP port, logs to the console at warn. */
export function frpsConfig(bindPort: number, vhostPort: number): string {
  return [
    `bindAddr = "${loopback}"`,
    `bindPort = ${bindPort}`,
    `proxyBindAddr = "${loopback}"`,
    `vhostHTTPPort = ${vhostPort}`,
    `transport.maxPoolCount = ${workPool}`,
    'log.to = "console"',
    'log.level = "warn"',
    '',
  ].join('\n');
}

/** frpcConfig is frpc's TOML: one entry per proxy, all forwarding to the backend. */
export function frpcConfig(serverPort: number, backendPort: number, proxies: FrpProxy[]): string {
  const lines = [`serverAddr = "${loopback}"`, `serverPort = ${serverPort}`, `transport.poolCount = ${workPool}`, 'loginFailExit = true', 'log.to = "console"', 'log.level = "warn"', ''];
  for (const p of proxies) {
    lines.push('[[proxies]]', `name = "${p.name}"`, `type = "${p.remotePort === undefined ? 'http' : 'tcp'}"`, `localIP = "${loopback}"`, `localPort = ${backendPort}`);
    if (p.remotePort !== undefined) lines.push(`remotePort = ${p.remotePort}`);
    else lines.push(`customDomains = ["${p.domain ?? `${p.name}.bench.tuna.test`}"]`);
    lines.push('');
  }
  return lines.join('\n');
}

interface FrpServer {
  frps: SpawnedProcess;
  bindPort: number;
  vhostPort: number;
}

/** FrpContender runs one frps and one frpc per mode; fresh tunnels are new frpc processes. */
export class FrpContender implements Contender {
  readonly name: string;
  private server: FrpServer | undefined;
  private frpc: SpawnedProcess | undefined;
  private dir = '';

  /** idleMemory is set on the http row only: the tcp row would need `tunnels` public ports for the same answer. */
  readonly idleMemory?: (ctx: BenchContext, tunnels: number) => Promise<MemoryFigure>;

  constructor(private readonly mode: FrpMode) {
    this.name = mode === 'http' ? 'frp' : 'frp (tcp)';
    if (mode === 'http') this.idleMemory = (ctx, tunnels) => this.measureIdleMemory(ctx, tunnels);
  }

  /** describe says which frp mode this row is. */
  describe(): string {
    return this.mode === 'http'
      ? 'client → frps (HTTP vhost, routes by Host) → TLS + yamux → frpc → backend'
      : 'client → frps (TCP proxy port) → TLS + yamux → frpc → backend';
  }

  /** start runs frps and an frpc with one proxy, and waits until a request passes through. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!ctx.tools.frps || !ctx.tools.frpc) throw new ContenderUnavailableError(this.name, 'frp is not built: run hack/bench-tools.sh');
    this.dir = join(ctx.tmp, this.mode === 'http' ? 'frp' : 'frp-tcp');
    await mkdir(this.dir, { recursive: true });
    this.server = await this.startServer(ctx, 'main');
    const { proc, target } = await this.startClient(ctx, this.server, 'bench');
    this.frpc = proc;
    return target;
  }

  /** firstByte starts a new frpc with a new proxy against the running frps. */
  async firstByte(ctx: BenchContext, attempt: number): Promise<number> {
    if (!this.server) throw new Error('frp: firstByte before start');
    const started = performance.now();
    const { proc } = await this.startClient(ctx, this.server, `fresh-${attempt}`, 2);
    const elapsed = performance.now() - started;
    await ctx.group.stop(proc);
    return elapsed;
  }

  /** measureIdleMemory compares frps + frpc RSS with 1 proxy and with `tunnels` http proxies, all idle. */
  private async measureIdleMemory(ctx: BenchContext, tunnels: number): Promise<MemoryFigure> {
    const measure = async (count: number): Promise<number> => {
      const server = await this.startServer(ctx, `mem-${count}`);
      const names = Array.from({ length: count }, (_, i) => `idle-${i}`);
      const config = join(this.dir, `frpc-mem-${count}.toml`);
      await writeFile(config, frpcConfig(server.bindPort, ctx.backendPort, names.map((name) => ({ name }))));
      const frpc = ctx.group.start(`frpc-mem-${count}`, ctx.tools.frpc, ['-c', config], ctx.lifetimeMs);
      try {
        for (const name of names)
          await readyOrExit(frpc, waitForStatus({ port: server.vhostPort, host: `${name}.bench.tuna.test` }, '/healthz', 30_000, 5), (code) => new ContenderUnavailableError(this.name, `frpc exited ${code}: ${frpc.output()}`));
        await new Promise((r) => setTimeout(r, 1000));
        return rssBytes(server.frps.child.pid ?? 0) + rssBytes(frpc.child.pid ?? 0);
      } finally {
        await ctx.group.stop(frpc);
        await ctx.group.stop(server.frps);
      }
    };
    const rssOne = await measure(1);
    const rssMany = await measure(tunnels);
    return { tunnels, rssOne, rssMany, note: `${tunnels} http proxies in one frpc, multiplexed on one TLS connection` };
  }

  /** stop ends frpc and frps. */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.frpc) await ctx.group.stop(this.frpc);
    if (this.server) await ctx.group.stop(this.server.frps);
  }

  private async startServer(ctx: BenchContext, label: string): Promise<FrpServer> {
    const bindPort = await freePort();
    const vhostPort = await freePort();
    const config = join(this.dir, `frps-${label}.toml`);
    await writeFile(config, frpsConfig(bindPort, vhostPort));
    const frps = ctx.group.start(`frps-${label}`, ctx.tools.frps, ['-c', config], ctx.lifetimeMs);
    // frps answers 404 on the vhost port for unknown hosts once it listens.
    await readyOrExit(frps, waitForListening({ port: vhostPort }), (code) => new ContenderUnavailableError(this.name, `frps exited ${code}: ${frps.output()}`));
    return { frps, bindPort, vhostPort };
  }

  private async startClient(ctx: BenchContext, server: FrpServer, name: string, pollMs = 20): Promise<{ proc: SpawnedProcess; target: Target }> {
    const proxy: FrpProxy = this.mode === 'http' ? { name, domain: `${name}.bench.tuna.test` } : { name, remotePort: await freePort() };
    const config = join(this.dir, `frpc-${name}.toml`);
    await writeFile(config, frpcConfig(server.bindPort, ctx.backendPort, [proxy]));
    const proc = ctx.group.start(`frpc-${name}`, ctx.tools.frpc, ['-c', config], ctx.lifetimeMs);
    const target: Target = proxy.remotePort !== undefined ? { port: proxy.remotePort } : { port: server.vhostPort, host: proxy.domain as string };
    await readyOrExit(proc, waitForStatus(target, '/1k', 15_000, pollMs), (code) => new ContenderUnavailableError(this.name, `frpc exited ${code}: ${proc.output()}`));
    return { proc, target };
  }
}
