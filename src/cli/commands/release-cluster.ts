import type { ControlClient, Reservation } from '../../control-api/index.js';
import type { CliIo } from '../io.js';

/** CLUSTER_LABEL is the label the operator puts on every reservation and tunnel key it makes (src/operator/edge-reconciler.ts). */
const CLUSTER_LABEL = 'tuna.dev/cluster';
/** RECLAIM_LABEL and RETAINED_LABEL: a Domain's or TCPPort's policy, and whom a retained reservation came from (src/operator/crd-reservations.ts). */
const RECLAIM_LABEL = 'tuna.dev/reclaim-policy';
const RETAINED_LABEL = 'tuna.dev/retained-from';

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
  /** reservations of `reclaimPolicy: Retain` Domains and TCPPorts, kept for the account (their keys revoked) */
  retained: number;
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
 * A reservation of a `reclaimPolicy: Retain` Domain or TCPPort is kept, as the operator keeps it
 * when the object is deleted: its keys are revoked and it is relabelled from the cluster's label to
 * `tuna.dev/retained-from=<cluster id>`, so the account still holds it and a new install adopts it.
 */
export async function releaseCluster(client: ControlClient, clusterId: string, io: CliIo, options: ClusterReleaseOptions): Promise<ClusterReleaseResult> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const labels = { [CLUSTER_LABEL]: clusterId };
  const result: ClusterReleaseResult = { released: 0, retained: 0, revoked: 0, passes: 0, isSettled: false };
  const step = Math.max(1, Math.min(2000, options.settleMs));
  let lastFound = 0; // when the last pass that found something ran (ms since the start)
  for (let elapsed = 0; elapsed <= options.maxMs; elapsed += step) {
    result.passes++;
    let found = 0;
    for (const reservation of (await client.listReservations(labels)).reservations) {
      if (isRetained(reservation)) {
        const revoked = await retain(client, reservation, clusterId);
        found++;
        result.retained++;
        result.revoked += revoked;
        io.err(`kept ${reservation.kind} ${reservation.value} for the account (reclaimPolicy Retain; ${revoked} tunnel key(s) revoked, labelled ${RETAINED_LABEL}=${clusterId})`);
        continue;
      }
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

/** isRetained: a Domain's or TCPPort's reservation whose object asked the edge to keep it. */
function isRetained(r: Reservation): boolean {
  return r.labels[RECLAIM_LABEL] === 'Retain' && (r.kind === 'domain' || r.kind === 'tcp-port');
}

/** retain revokes a reservation's live keys and moves it from the cluster's label to RETAINED_LABEL; it returns the keys revoked. */
async function retain(client: ControlClient, r: Reservation, clusterId: string): Promise<number> {
  let revoked = 0;
  for (const key of (await client.listTunnelKeys({ [CLUSTER_LABEL]: clusterId })).tunnelKeys) {
    if (key.reservationId !== r.id || key.revokedAt !== null) continue;
    await client.revokeTunnelKey(key.id);
    revoked++;
  }
  const labels: Record<string, string> = { ...r.labels, [RETAINED_LABEL]: clusterId };
  delete labels[CLUSTER_LABEL];
  const named = r.name !== null ? { name: r.name } : {};
  await client.reserve(r.kind === 'domain' ? { kind: 'domain', hostname: r.value, labels, ...named } : { kind: 'tcp-port', port: Number(r.value), labels, ...named });
  return revoked;
}
