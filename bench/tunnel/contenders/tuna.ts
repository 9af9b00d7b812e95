/**
 * tuna: client → `tuna edge` (public HTTP listener, routes by Host) → the HTTP/2 tunnel the agent
 * dialed (TLS) → `tuna http <port>` (data plane) → backend. Both run as real processes through the
 * CLI (`node --import tsx src/cli/main.ts`), the way users run them.
 *
 * The CLI is built by another part of issue 3 at the same time as this benchmark: when it is not
 * there yet, or a command fails, the contender reports "not available (reason)" and the other
 * contenders' figures still come out. The command lines live in `tunaCommands` alone.
 */
import { createHash, randomBytes } from 'node:crypto';
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

/** TunaEdgeSetup is what the edge is started with: its ports, its certificate and the hosts it serves. */
export interface TunaEdgeSetup {
  httpPort: number;
  tunnelPort: number;
  /** PEM files of the tunnel listener's self-signed certificate (the agent trusts it with --ca) */
  certFile: string;
  keyFile: string;
  hosts: string[];
  /** SHA-256 (hex) of the one tunnel key every binding of this edge accepts */
  keySha256: string;
}

const cliPath = join(repoRoot, 'src', 'cli', 'main.ts');

/** bindingIdOf is the binding `tuna http --host H` asks for (src/cli/quick-graph.ts). */
export function bindingIdOf(host: string): string {
  return `binding/host/${host}`;
}

/**
 * edgeConfig is the edge's config file (src/edge/config.ts): a TLS tunnel listener and a plain
 * HTTP public listener on loopback, and one host binding per host accepting the run's key.
 */
export function edgeConfig(setup: TunaEdgeSetup): string {
  const lines = [
    'listen:',
    `  tunnel: {host: "${loopback}", port: ${setup.tunnelPort}, tls: {certFile: "${setup.certFile}", keyFile: "${setup.keyFile}"}}`,
    `  http: {host: "${loopback}", port: ${setup.httpPort}}`,
    'bindings:',
  ];
  for (const host of setup.hosts)
    lines.push(`  - {id: "${bindingIdOf(host)}", kind: host, hostnames: ["${host}"], keys: [{sha256: "${setup.keySha256}"}]}`);
  return `${lines.join('\n')}\n`;
}

/** tunaCommands are the argument vectors after `node --import tsx` for the edge and the agents. */
export function tunaCommands(setup: TunaEdgeSetup, configFile: string): { edge: string[]; http: (backendPort: number, host: string) => string[]; run: (dir: string) => string[] } {
  const edgeFlags = ['--edge', `tls://${loopback}:${setup.tunnelPort}`, '--ca', setup.certFile];
  return {
    edge: [cliPath, 'edge', '--config', configFile],
    http: (backendPort, host) => [cliPath, 'http', String(backendPort), '--host', host, ...edgeFlags],
    run: (dir) => [cliPath, 'run', '--manifests', dir, ...edgeFlags],
  };
}

/** TunaContender runs one edge and one `tuna http` agent; fresh tunnels are new agent processes. */
export class TunaContender implements Contender {
  readonly name = 'tuna';
  private edge: SpawnedProcess | undefined;
  private agent: SpawnedProcess | undefined;
  private setup: TunaEdgeSetup | undefined;
  private dir = '';
  private certFiles: { certFile: string; keyFile: string } | undefined;
  // One random key per run, given to agents through the environment (not argv, so not in `ps`)
  // and to the edge as its SHA-256 only; never printed (preamble: no secret in a log line).
  private readonly key = randomBytes(24).toString('base64url');

  /** describe says which path tuna's requests take. */
  describe(): string {
    return 'client → tuna edge (HTTP, routes by Host) → TLS + HTTP/2 tunnel → tuna http agent → backend';
  }

  /** start runs the edge and one agent, and waits until a request passes through. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!existsSync(cliPath)) throw new ContenderUnavailableError(this.name, 'src/cli/main.ts does not exist yet');
    if (!ctx.tools.openssl) throw new ContenderUnavailableError(this.name, 'openssl is needed for the tunnel certificate');
    this.dir = join(ctx.tmp, 'tuna');
    await mkdir(this.dir, { recursive: true });
    this.certFiles = await makeCertificate(ctx, this.dir);
    const hosts = ['bench', ...Array.from({ length: 8 }, (_, i) => `fresh-${i}`)].map((h) => `${h}.bench.tuna.test`);
    const { edge, setup } = await this.startEdge(ctx, 'main', hosts);
    this.edge = edge;
    this.setup = setup;
    const { proc, target } = await this.startAgent(ctx, setup, hosts[0] as string, 20);
    this.agent = proc;
    return target;
  }

  /** firstByte starts a new agent for a host the edge knows but no agent serves yet. */
  async firstByte(ctx: BenchContext, attempt: number): Promise<number> {
    if (!this.setup) throw new Error('tuna: firstByte before start');
    const host = this.setup.hosts[1 + (attempt % (this.setup.hosts.length - 1))] as string;
    const started = performance.now();
    const { proc } = await this.startAgent(ctx, this.setup, host, 2);
    const elapsed = performance.now() - started;
    await ctx.group.stop(proc);
    return elapsed;
  }

  /** idleMemory compares edge + agent RSS with 1 and with `tunnels` hosts published by one `tuna run`. */
  async idleMemory(ctx: BenchContext, tunnels: number): Promise<MemoryFigure> {
    const measure = async (count: number): Promise<number> => {
      const hosts = Array.from({ length: count }, (_, i) => `idle-${i}.bench.tuna.test`);
      const { edge, setup } = await this.startEdge(ctx, `mem-${count}`, hosts);
      const manifests = join(this.dir, `manifests-${count}`);
      await writeManifests(manifests, hosts, ctx.backendPort);
      const args = tunaCommands(setup, '').run(manifests);
      const agent = ctx.group.start(`tuna-run-${count}`, process.execPath, ['--import', 'tsx', ...args], ctx.lifetimeMs, { cwd: repoRoot, env: { ...process.env, TUNA_KEY: this.key } });
      try {
        for (const host of hosts)
          await readyOrExit(agent, waitForStatus({ port: setup.httpPort, host }, '/healthz', 60_000, 5), (code) => new ContenderUnavailableError(this.name, `tuna run exited ${code}: ${lastLines(agent.output())}`));
        await new Promise((r) => setTimeout(r, 1000));
        return rssBytes(edge.child.pid ?? 0) + rssBytes(agent.child.pid ?? 0);
      } finally {
        await ctx.group.stop(agent);
        await ctx.group.stop(edge);
      }
    };
    const rssOne = await measure(1);
    const rssMany = await measure(tunnels);
    return { tunnels, rssOne, rssMany, note: `${tunnels} hosts (one binding each) published by one \`tuna run\` agent` };
  }

  /** stop ends the agent and the edge. */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.agent) await ctx.group.stop(this.agent);
    if (this.edge) await ctx.group.stop(this.edge);
  }

  private async startEdge(ctx: BenchContext, label: string, hosts: string[]): Promise<{ edge: SpawnedProcess; setup: TunaEdgeSetup }> {
    const certs = this.certFiles as { certFile: string; keyFile: string };
    const keySha256 = createHash('sha256').update(this.key).digest('hex');
    const setup: TunaEdgeSetup = { httpPort: await freePort(), tunnelPort: await freePort(), ...certs, hosts, keySha256 };
    const configFile = join(this.dir, `edge-${label}.yaml`);
    await writeFile(configFile, edgeConfig(setup), { mode: 0o600 });
    const args = tunaCommands(setup, configFile).edge;
    const edge = ctx.group.start(`tuna-edge-${label}`, process.execPath, ['--import', 'tsx', ...args], ctx.lifetimeMs, { cwd: repoRoot });
    await readyOrExit(edge, waitForListening({ port: setup.httpPort }, 20_000), (code) => new ContenderUnavailableError(this.name, `tuna edge exited ${code}: ${lastLines(edge.output())}`));
    return { edge, setup };
  }

  private async startAgent(ctx: BenchContext, setup: TunaEdgeSetup, host: string, pollMs: number): Promise<{ proc: SpawnedProcess; target: Target }> {
    const args = tunaCommands(setup, '').http(ctx.backendPort, host);
    const proc = ctx.group.start(`tuna-http-${host}`, process.execPath, ['--import', 'tsx', ...args], ctx.lifetimeMs, { cwd: repoRoot, env: { ...process.env, TUNA_KEY: this.key } });
    const target: Target = { port: setup.httpPort, host };
    await readyOrExit(proc, waitForStatus(target, '/1k', 20_000, pollMs), (code) => new ContenderUnavailableError(this.name, `tuna http exited ${code}: ${lastLines(proc.output())}`));
    return { proc, target };
  }
}

/** makeCertificate makes a throw-away self-signed P-256 certificate for 127.0.0.1 with openssl. */
async function makeCertificate(ctx: BenchContext, dir: string): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, 'tunnel-cert.pem');
  const keyFile = join(dir, 'tunnel-key.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${loopback}`, '-addext', `subjectAltName=IP:${loopback}`, '-keyout', keyFile, '-out', certFile];
  const res = await ctx.group.run('openssl', ctx.tools.openssl, args, 15_000);
  if (res.code !== 0) throw new ContenderUnavailableError('tuna', `openssl req failed: ${res.stderr.trim().split('\n')[0] ?? ''}`);
  return { certFile, keyFile };
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
