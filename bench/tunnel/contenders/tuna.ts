/**
 * tuna: client → `tuna edge` (public HTTP listener, routes by Host) → the HTTP/2 tunnel the agent
 * dialed (TLS) → `tuna http <port>` (data plane) → backend. Both run as real processes through the
 * CLI (`node --import tsx src/cli/main.ts`), the way users run them.
 *
 * The CLI is built by another part of issue 3 at the same time as this benchmark: when it is not
 * there yet, or a command fails, the contender reports "not available (reason)" and the other
 * contenders' figures still come out. The command lines live in `tunaCommands` alone.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Contender, MemoryFigure } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import { rssBytes } from '../memory.js';
import type { Target } from '../net.js';
import { freePort, loopback, waitForListening, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';
import { repoRoot } from '../tools.js';

/** TunaEdgeSetup is what the edge is started with: its ports and the tunnel bindings it accepts. */
export interface TunaEdgeSetup {
  httpPort: number;
  tunnelPort: number;
  bindings: { host: string; key: string }[];
}

const cliPath = join(repoRoot, 'src', 'cli', 'main.ts');

/** edgeConfig is the edge's config file: listeners on loopback and one tunnel key per host. */
export function edgeConfig(setup: TunaEdgeSetup): string {
  const lines = ['listen:', `  http: "${loopback}:${setup.httpPort}"`, `  tunnel: "${loopback}:${setup.tunnelPort}"`, 'bindings:'];
  for (const b of setup.bindings) lines.push(`  - host: ${b.host}`, `    key: ${b.key}`);
  return `${lines.join('\n')}\n`;
}

/** tunaCommands are the argument vectors of `tuna edge` and `tuna http` (after `node --import tsx`). */
export function tunaCommands(configFile: string, setup: TunaEdgeSetup, backendPort: number, host: string): { edge: string[]; agent: string[] } {
  return {
    edge: [cliPath, 'edge', '--config', configFile],
    agent: [cliPath, 'http', String(backendPort), '--host', host, '--edge', `${loopback}:${setup.tunnelPort}`],
  };
}

/** TunaContender runs one edge and one `tuna http` agent; fresh tunnels are new agent processes. */
export class TunaContender implements Contender {
  readonly name = 'tuna';
  private edge: SpawnedProcess | undefined;
  private agent: SpawnedProcess | undefined;
  private setup: TunaEdgeSetup | undefined;
  private dir = '';

  /** describe says which path tuna's requests take. */
  describe(): string {
    return 'client → tuna edge (HTTP, routes by Host) → TLS + HTTP/2 tunnel → tuna http agent → backend';
  }

  /** start runs the edge and one agent, and waits until a request passes through. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!existsSync(cliPath)) throw new ContenderUnavailableError(this.name, 'src/cli/main.ts does not exist yet');
    this.dir = join(ctx.tmp, 'tuna');
    await mkdir(this.dir, { recursive: true });
    const hosts = ['bench', ...Array.from({ length: 8 }, (_, i) => `fresh-${i}`)].map((h) => `${h}.bench.tuna.test`);
    const { edge, setup } = await this.startEdge(ctx, 'main', hosts);
    this.edge = edge;
    this.setup = setup;
    const { proc, target } = await this.startAgent(ctx, setup, 0, 20);
    this.agent = proc;
    return target;
  }

  /** firstByte starts a new agent for a host the edge knows but no agent serves yet. */
  async firstByte(ctx: BenchContext, attempt: number): Promise<number> {
    if (!this.setup) throw new Error('tuna: firstByte before start');
    const started = performance.now();
    const { proc } = await this.startAgent(ctx, this.setup, 1 + (attempt % 8), 2);
    const elapsed = performance.now() - started;
    await ctx.group.stop(proc);
    return elapsed;
  }

  /** idleMemory compares edge + agent RSS with 1 tunnel and with `tunnels` (one agent per binding set). */
  async idleMemory(ctx: BenchContext, tunnels: number): Promise<MemoryFigure> {
    const measure = async (count: number): Promise<number> => {
      const hosts = Array.from({ length: count }, (_, i) => `idle-${i}.bench.tuna.test`);
      const { edge, setup } = await this.startEdge(ctx, `mem-${count}`, hosts);
      const manifests = join(this.dir, `manifests-${count}`);
      await writeManifests(manifests, hosts, ctx.backendPort);
      const agent = ctx.group.start(`tuna-run-${count}`, process.execPath, ['--import', 'tsx', cliPath, 'run', '--manifests', manifests, '--edge', `${loopback}:${setup.tunnelPort}`], ctx.lifetimeMs, { cwd: repoRoot });
      try {
        for (const host of hosts)
          await readyOrExit(agent, waitForStatus({ port: setup.httpPort, host }, '/healthz', 60_000, 5), (code) => new ContenderUnavailableError(this.name, `tuna run exited ${code}: ${agent.output()}`));
        await new Promise((r) => setTimeout(r, 1000));
        return rssBytes(edge.child.pid ?? 0) + rssBytes(agent.child.pid ?? 0);
      } finally {
        await ctx.group.stop(agent);
        await ctx.group.stop(edge);
      }
    };
    const rssOne = await measure(1);
    const rssMany = await measure(tunnels);
    return { tunnels, rssOne, rssMany, note: `${tunnels} hosts published by one \`tuna run\` agent` };
  }

  /** stop ends the agent and the edge. */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.agent) await ctx.group.stop(this.agent);
    if (this.edge) await ctx.group.stop(this.edge);
  }

  private async startEdge(ctx: BenchContext, label: string, hosts: string[]): Promise<{ edge: SpawnedProcess; setup: TunaEdgeSetup }> {
    // Keys are random per run and never printed (preamble: no secret in a log line).
    const setup: TunaEdgeSetup = { httpPort: await freePort(), tunnelPort: await freePort(), bindings: hosts.map((host) => ({ host, key: randomBytes(18).toString('base64url') })) };
    const configFile = join(this.dir, `edge-${label}.yaml`);
    await writeFile(configFile, edgeConfig(setup), { mode: 0o600 });
    const { edge: args } = tunaCommands(configFile, setup, ctx.backendPort, hosts[0] ?? '');
    const edge = ctx.group.start(`tuna-edge-${label}`, process.execPath, ['--import', 'tsx', ...args], ctx.lifetimeMs, { cwd: repoRoot });
    await readyOrExit(edge, waitForListening({ port: setup.httpPort }, 20_000), (code) => new ContenderUnavailableError(this.name, `tuna edge exited ${code}: ${lastLines(edge.output())}`));
    return { edge, setup };
  }

  private async startAgent(ctx: BenchContext, setup: TunaEdgeSetup, index: number, pollMs: number): Promise<{ proc: SpawnedProcess; target: Target }> {
    const binding = setup.bindings[index];
    if (!binding) throw new Error(`tuna: no binding ${index}`);
    const { agent: args } = tunaCommands('', setup, ctx.backendPort, binding.host);
    // The key goes through the environment, not argv, so it does not show in `ps`.
    const proc = ctx.group.start(`tuna-http-${index}`, process.execPath, ['--import', 'tsx', ...args], ctx.lifetimeMs, { cwd: repoRoot, env: { ...process.env, TUNA_TUNNEL_KEY: binding.key } });
    const target: Target = { port: setup.httpPort, host: binding.host };
    await readyOrExit(proc, waitForStatus(target, '/1k', 20_000, pollMs), (code) => new ContenderUnavailableError(this.name, `tuna http exited ${code}: ${lastLines(proc.output())}`));
    return { proc, target };
  }
}

/** writeManifests writes, per host, an Ingress and a selector-less Service + EndpointSlice to the backend. */
async function writeManifests(dir: string, hosts: string[], backendPort: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const docs: string[] = [
    `apiVersion: v1\nkind: Service\nmetadata: {name: backend, namespace: default}\nspec:\n  ports: [{name: http, port: 80, targetPort: ${backendPort}}]`,
    `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: backend-1\n  namespace: default\n  labels: {kubernetes.io/service-name: backend}\naddressType: IPv4\nports: [{name: http, port: ${backendPort}}]\nendpoints: [{addresses: ["${loopback}"], conditions: {ready: true}}]`,
  ];
  hosts.forEach((host, i) =>
    docs.push(
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: idle-${i}, namespace: default}\nspec:\n  ingressClassName: tuna\n  rules:\n  - host: ${host}\n    http:\n      paths: [{path: /, pathType: Prefix, backend: {service: {name: backend, port: {number: 80}}}}]`,
    ),
  );
  await writeFile(join(dir, 'bench.yaml'), `${docs.join('\n---\n')}\n`);
}

/** lastLines keeps the end of a process's output for an "unavailable" reason. */
function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
}
