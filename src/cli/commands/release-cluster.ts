import type { ControlClient } from '../../control-api/index.js';
import type { CliIo } from '../io.js';

/** CLUSTER_LABEL is the label the operator puts on every reservation and tunnel key it makes (src/operator/edge-reconciler.ts). */
const CLUSTER_LABEL = 'tuna.dev/cluster';

/** ClusterReleaseOptions bound the passes of releaseCluster. */
export interface ClusterReleaseOptions {
  /** settleMs: a pass that finds nothing must be followed by this long with nothing new */
  readonly settleMs: number;
  /** maxMs bounds the whole run */
  readonly maxMs: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** ClusterReleaseResult counts what releaseCluster released and revoked. */
export interface ClusterReleaseResult {
  released: number;
  revoked: number;
  passes: number;
  /** isSettled: the last passes found nothing (false: maxMs ran out first) */
  isSettled: boolean;
}

/**
 * releaseCluster releases every reservation labelled with the cluster id (which revokes the tunnel
 * keys bound to it) and revokes every live tunnel key left with that label, in passes until a
 * pass finds nothing and nothing new appears for settleMs. Why passes: `helm uninstall` runs this
 * while the operator pods are still stopping, and a leader in its grace period may reserve once more.
 */
export async function releaseCluster(client: ControlClient, clusterId: string, io: CliIo, options: ClusterReleaseOptions): Promise<ClusterReleaseResult> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const labels = { [CLUSTER_LABEL]: clusterId };
  const result: ClusterReleaseResult = { released: 0, revoked: 0, passes: 0, isSettled: false };
  const step = Math.max(1, Math.min(2000, options.settleMs));
  let lastFound = 0; // when the last pass that found something ran (ms since the start)
  for (let elapsed = 0; elapsed <= options.maxMs; elapsed += step) {
    result.passes++;
    let found = 0;
    for (const reservation of (await client.listReservations(labels)).reservations) {
      const released = await client.release(reservation.id);
      found++;
      result.released++;
      result.revoked += released.revokedTunnelKeyIds.length;
      io.err(`released ${reservation.kind} ${reservation.value} (${released.revokedTunnelKeyIds.length} tunnel key(s) revoked with it)`);
    }
    for (const key of (await client.listTunnelKeys(labels)).tunnelKeys.filter((k) => k.revokedAt === null)) {
      await client.revokeTunnelKey(key.id);
      found++;
      result.revoked++;
      io.err(`revoked tunnel key ${key.id}`);
    }
    if (found > 0) lastFound = elapsed;
    else if (elapsed - lastFound >= options.settleMs) return { ...result, isSettled: true };
    await sleep(step);
  }
  return result;
}
