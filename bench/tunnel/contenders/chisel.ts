/**
 * chisel (github.com/jpillora/chisel): a reverse TCP tunnel, SSH over WebSocket over HTTP. The
 * server listens on loopback with `--reverse`; the client dials it and asks for
 * `R:127.0.0.1:<public>:127.0.0.1:<backend>`, so the server opens the public port and carries each
 * connection back through the client. chisel has no HTTP mode: it copies bytes (like `frp (tcp)`).
 */
import type { BenchContext, Contender } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import type { Target } from '../net.js';
import { freePort, loopback, waitForListening, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';

/** chiselRemote is the reverse remote that makes the server's `publicPort` reach the backend. */
export function chiselRemote(publicPort: number, backendPort: number): string {
  return `R:${loopback}:${publicPort}:${loopback}:${backendPort}`;
}

/** ChiselContender runs one chisel server and one client; fresh tunnels are new clients. */
export class ChiselContender implements Contender {
  readonly name = 'chisel';
  private server: SpawnedProcess | undefined;
  private client: SpawnedProcess | undefined;
  private serverPort = 0;

  /** describe says how chisel is set up. */
  describe(): string {
    return 'client → chisel server (reverse remote port) → SSH over WebSocket → chisel client → backend';
  }

  /** start runs the server and one client, and waits until a request passes through. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!ctx.tools.chisel) throw new ContenderUnavailableError(this.name, 'chisel is not built: run hack/bench-tools.sh');
    this.serverPort = await freePort();
    const server = ctx.group.start('chisel-server', ctx.tools.chisel, ['server', '--host', loopback, '--port', String(this.serverPort), '--reverse'], ctx.lifetimeMs);
    this.server = server;
    // The server answers plain HTTP on its port (404 without a WebSocket upgrade) once it listens.
    await readyOrExit(server, waitForListening({ port: this.serverPort }), (code) => new ContenderUnavailableError(this.name, `server exited ${code}: ${server.output()}`));
    const { proc, target } = await this.startClient(ctx, 'chisel-client', 20);
    this.client = proc;
    return target;
  }

  /** firstByte starts a new client with a new reverse port against the running server. */
  async firstByte(ctx: BenchContext, attempt: number): Promise<number> {
    const started = performance.now();
    const { proc } = await this.startClient(ctx, `chisel-fresh-${attempt}`, 2);
    const elapsed = performance.now() - started;
    await ctx.group.stop(proc);
    return elapsed;
  }

  /** stop ends the client and the server. */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.client) await ctx.group.stop(this.client);
    if (this.server) await ctx.group.stop(this.server);
  }

  private async startClient(ctx: BenchContext, name: string, pollMs: number): Promise<{ proc: SpawnedProcess; target: Target }> {
    const publicPort = await freePort();
    const args = ['client', `http://${loopback}:${this.serverPort}`, chiselRemote(publicPort, ctx.backendPort)];
    const proc = ctx.group.start(name, ctx.tools.chisel, args, ctx.lifetimeMs);
    const target = { port: publicPort };
    await readyOrExit(proc, waitForStatus(target, '/1k', 15_000, pollMs), (code) => new ContenderUnavailableError(this.name, `client exited ${code}: ${proc.output()}`));
    return { proc, target };
  }
}
