/**
 * node relay: the calibration row. `bench/tunnel/reference/minimal-relay.ts` is a
 * REFERENCE, not product code: tuna's four codecs (public HTTP/1.1 server → HTTP/2 client over the
 * TLS socket the agent side dialed → HTTP/2 server → keep-alive HTTP/1.1 client) and nothing else.
 * The distance between its row and tuna's is what tuna's own code costs on top of Node.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Contender } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import type { Target } from '../net.js';
import { freePort, waitForListening, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';
import { repoRoot } from '../tools.js';
import { makeCertificate } from './tuna.js';

const script = join(repoRoot, 'bench', 'tunnel', 'reference', 'minimal-relay.ts');

/** NodeRelayContender runs the reference relay's edge and agent processes with a TLS tunnel between them. */
export class NodeRelayContender implements Contender {
  readonly name = 'node relay (reference)';
  private procs: SpawnedProcess[] = [];

  /** describe says what the row is. */
  describe(): string {
    return 'calibration, not a product: client → minimal Node edge (http server → http2 client) → TLS → minimal Node agent (http2 server → keep-alive http client) → backend (bench/tunnel/reference/minimal-relay.ts; no routing, limits or abort handling)';
  }

  /** start runs both sides and waits until a request passes through. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!ctx.tools.openssl) throw new ContenderUnavailableError(this.name, 'openssl is not installed');
    const dir = join(ctx.tmp, 'node-relay');
    await mkdir(dir, { recursive: true });
    const { certFile, keyFile } = await makeCertificate(ctx, dir);
    const publicPort = await freePort();
    const tunnelPort = await freePort();
    const node = ['--max-semi-space-size=16', '--import', 'tsx', script];
    const edge = ctx.group.start('relay-edge', process.execPath, [...node, 'edge', String(publicPort), String(tunnelPort), certFile, keyFile], ctx.lifetimeMs, { cwd: repoRoot });
    this.procs.push(edge);
    await readyOrExit(edge, waitForListening({ port: publicPort }, 20_000), (code) => new ContenderUnavailableError(this.name, `edge exited ${code}: ${edge.output()}`));
    const agent = ctx.group.start('relay-agent', process.execPath, [...node, 'agent', String(tunnelPort), String(ctx.backendPort), certFile], ctx.lifetimeMs, { cwd: repoRoot });
    this.procs.push(agent);
    const target: Target = { port: publicPort };
    await readyOrExit(agent, waitForStatus(target, '/1k', 20_000), (code) => new ContenderUnavailableError(this.name, `agent exited ${code}: ${agent.output()}`));
    return target;
  }

  /** stop ends both processes. */
  async stop(ctx: BenchContext): Promise<void> {
    for (const p of this.procs.reverse()) await ctx.group.stop(p);
    this.procs = [];
  }
}
