/**
 * nginx: the Debian package as a one-hop HTTP reverse proxy in front of the backend, the yardstick
 * for "what one well-built proxy hop costs". The config is generated into the run's temp dir.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BenchContext, Contender } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import type { Target } from '../net.js';
import { freePort, loopback, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';

/**
 * nginxConfig is a minimal proxy config: keep-alive to the upstream (`keepalive` + HTTP/1.1 + an
 * empty Connection header, as the nginx upstream docs prescribe), and no buffering either way so a
 * 1 GiB body streams through instead of being spooled to a temp file (the tunnels stream too).
 */
export function nginxConfig(dir: string, listenPort: number, backendPort: number): string {
  return `daemon off;
master_process on;
worker_processes auto;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'client_body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  upstream backend {
    server ${loopback}:${backendPort};
    keepalive 128;
  }
  server {
    listen ${loopback}:${listenPort} backlog=4096;
    keepalive_requests 1000000;
    client_max_body_size 0;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
      proxy_send_timeout 300s;
    }
  }
}
`;
}

/** NginxContender runs `nginx -p <tmp> -c <tmp>/nginx.conf` in the foreground. */
export class NginxContender implements Contender {
  readonly name = 'nginx';
  private proc: SpawnedProcess | undefined;

  /** describe says how the proxy is configured. */
  describe(): string {
    return 'client → nginx (`worker_processes auto`, keep-alive upstream pool, no buffering) → backend';
  }

  /** start writes the config, starts nginx and waits until it proxies `/healthz`. */
  async start(ctx: BenchContext): Promise<Target> {
    if (!ctx.tools.nginx) throw new ContenderUnavailableError(this.name, 'nginx is not installed: run hack/bench-tools.sh');
    const dir = join(ctx.tmp, 'nginx');
    await mkdir(dir, { recursive: true });
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    await writeFile(conf, nginxConfig(dir, port, ctx.backendPort));
    // -e: nginx opens its compiled-in error log before reading the config unless told otherwise.
    this.proc = ctx.group.start('nginx', ctx.tools.nginx, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], ctx.lifetimeMs);
    const target = { port };
    const proc = this.proc;
    await readyOrExit(proc, waitForStatus(target, '/healthz', 10_000), (code) => new ContenderUnavailableError(this.name, `nginx exited ${code}: ${proc.output()}`));
    return target;
  }

  /** stop ends nginx (SIGTERM: fast shutdown of master and workers). */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.proc) await ctx.group.stop(this.proc);
  }
}
