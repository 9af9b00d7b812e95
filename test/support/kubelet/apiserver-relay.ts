// apiserver-relay.ts — the `kubernetes` Service for pods: a TCP relay on its ClusterIP to the
// apiserver on the host's loopback.
//
// Why a relay: the apiserver listens on 127.0.0.1, which a pod's network namespace cannot see, and
// there is no kube-proxy. The ClusterIP (198.19.0.1, in the apiserver's certificate) is added to
// the pods' bridge, so a pod reaches it through its default route; the relay passes the bytes on
// (TLS stays end to end between the pod and the apiserver).
import net from 'node:net';
import type { ServiceAddress } from './container-env.js';
import { BRIDGE_NAME } from './pod-network.js';
import { runCommand } from './run-command.js';

/** ApiserverRelay is a running relay; close stops it and drops its open connections. */
export interface ApiserverRelay {
  close(): Promise<void>;
}

/** startApiserverRelay adds `service.host` to the bridge and relays `service` to `apiserver`. */
export async function startApiserverRelay(service: ServiceAddress, apiserver: ServiceAddress): Promise<ApiserverRelay> {
  await runCommand('ip', ['addr', 'replace', `${service.host}/32`, 'dev', BRIDGE_NAME]);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: apiserver.host, port: apiserver.port });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.once('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(service.port, service.host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** parseServiceAddress reads `HOST:PORT` (an IPv4 address or a name), naming the variable on error. */
export function parseServiceAddress(text: string, variable: string): ServiceAddress {
  const match = /^([^:\s]+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (!match || port < 1 || port > 65_535) throw new Error(`${variable} must be HOST:PORT, got ${JSON.stringify(text)}`);
  return { host: match[1] ?? '', port };
}
