// readiness-probe.ts — runs a container's readiness probe once: exec, tcpSocket or httpGet.
import { execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { HOST_PATH } from './container-process.js';

/** ProbeRoot is where an exec probe of a pulled image's container runs: its process, user and PATH. */
export interface ProbeRoot {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
  readonly path: string;
}

/** resolveProbePort turns a probe's port (number or container port name) into a number. */
export function resolveProbePort(container: V1Container, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/**
 * probeOnce says whether the probe succeeds now. Network probes go to the pod's own IP, inside
 * 198.18.0.0/15; exec probes run inside the pod's network namespace (and a pulled image's root).
 * Bounded by timeoutSeconds.
 */
export function probeOnce(probe: V1Probe, container: V1Container, podIp: string, netns: string, inRoot?: ProbeRoot): Promise<boolean> {
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec?.command?.length) {
    const command = probe.exec.command;
    // A pulled image's container: the command runs in its root, namespaces and user (nsenter -r -w
    // chroots to the process's root and cwd before it looks the command up on PATH).
    const [file, args, env] = inRoot
      ? ['nsenter', ['-t', String(inRoot.pid), '-m', '-n', '-r', '-w', '-S', String(inRoot.uid), '-G', String(inRoot.gid), '--', ...command], { PATH: inRoot.path }]
      : ['ip', ['netns', 'exec', netns, ...command], { PATH: HOST_PATH }];
    return new Promise((resolve) => {
      execFile(file, args, { timeout: timeoutMs, env }, (error) => resolve(!error));
    });
  }
  if (probe.tcpSocket) {
    const port = resolveProbePort(container, probe.tcpSocket.port);
    if (port === undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const socket = net.connect({ host: podIp, port, timeout: timeoutMs });
      const finish = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.once('connect', () => finish(true));
      socket.once('error', () => finish(false));
      socket.once('timeout', () => finish(false));
    });
  }
  if (probe.httpGet) {
    const port = resolveProbePort(container, probe.httpGet.port);
    if (port === undefined || probe.httpGet.scheme === 'HTTPS') return Promise.resolve(false);
    const headers = Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value]));
    return new Promise((resolve) => {
      const request = http.get({ host: podIp, port, path: probe.httpGet?.path ?? '/', headers, timeout: timeoutMs, agent: false }, (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        resolve(status >= 200 && status < 400); // the kubelet's rule: 2xx and 3xx succeed
      });
      request.once('error', () => resolve(false));
      request.once('timeout', () => request.destroy());
    });
  }
  return Promise.resolve(true);
}
