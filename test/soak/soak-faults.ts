// soak-faults.ts — the faults the soak injects, each an injection and a recovery step, and the
// schedule that runs them one at a time, then two at once.
import { NetworkingV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { CHART, runHelm } from '../support/helm.js';
import { runCommand } from '../support/kubelet/run-command.js';
import { podNetworkNames } from '../support/kubelet/pod-network.js';
import { BASE_DOMAIN } from '../support/edge-store-harness.js';
import { waitFor } from '../cluster/cluster-env.js';
import { findContainerProcess } from '../cluster/pod-exec.js';
import { isReady } from './soak-stack.js';
import type { Stack } from './soak-stack.js';
import { answersThrough } from './soak-traffic.js';

/** FaultRecord is what happened to one fault: when it was injected and when its recovery step ended. */
export interface FaultRecord {
  name: string;
  injectedAt: number;
  /** the end of the recovery step (a restart, a link up); for a kill the platform recovers from, the injection */
  recoveredAt: number;
  /** the fault's own window ends here (the next fault's start, or the end of the run) */
  windowEnd: number;
  /** what the fault saw (which pod, which port), and what its recovery step measured */
  notes: string[];
  /** a check of the fault itself that failed (a 500 where a 503 is promised) */
  failures: string[];
  /** what the recovery step measured, by name (heldAgainMs, answeringMs: from the injection) */
  measures: Record<string, number>;
  /** keys and reservations the fault took away on purpose (not lost: the invariant leaves them out) */
  revokedKeys: string[];
  releasedReservations: string[];
}

/** Fault is one kind of failure: `inject` breaks something, `recover` undoes it (or waits for the platform to). */
export interface Fault {
  readonly name: string;
  inject(stack: Stack, record: FaultRecord): Promise<void>;
  recover(stack: Stack, record: FaultRecord): Promise<void>;
}

/** OUTAGE_MS is how long a killed edge, a killed PostgreSQL or a cut link stays down. */
const OUTAGE_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** operatorProcess finds the pid of the operator container of a pod (`node … operator`). */
async function operatorProcess(pod: V1Pod): Promise<number> {
  return findContainerProcess(pod.metadata?.uid ?? '', (argv) => argv.includes('operator'));
}

const restartsOf = (pod: V1Pod | undefined) => pod?.status?.containerStatuses?.[0]?.restartCount ?? 0;

/** killOperator kills -9 the process of the leading (or a following) operator pod; the kubelet starts it again. */
function killOperator(role: 'leader' | 'follower'): Fault {
  let target: V1Pod | undefined;
  return {
    name: `kill -9 operator ${role}`,
    async inject(stack, record) {
      const leader = await stack.leader();
      const pods = await stack.operatorPods();
      target = pods.find((p) => (role === 'leader') === (p.metadata?.name === leader));
      if (target === undefined) throw new Error(`no ${role} pod among ${pods.map((p) => p.metadata?.name).join(', ')} (leader ${leader})`);
      const pid = await operatorProcess(target);
      process.kill(pid, 'SIGKILL');
      record.notes.push(`${target.metadata?.name} pid ${pid}`);
    },
    async recover(stack, record) {
      const name = target?.metadata?.name;
      const before = restartsOf(target);
      await waitFor(`${name} restarted and ready`, 120_000, async () => {
        const pod = (await stack.operatorPods()).find((p) => p.metadata?.name === name);
        return pod !== undefined && restartsOf(pod) > before && isReady(pod) ? true : undefined;
      }, 250);
      record.notes.push(`ready again after ${((Date.now() - record.injectedAt) / 1000).toFixed(1)} s; leader now ${await stack.leader()}`);
    },
  };
}

/** killEdge kills -9 one edge node and starts it again after OUTAGE_MS; the tunnels it had move to the other and back. */
function killEdge(name: string): Fault {
  return {
    name: `kill -9 edge ${name}`,
    async inject(stack, record) {
      const edge = stack.edges.find((e) => e.spec.name === name)!;
      record.notes.push(`pid ${edge.pid}`);
      edge.kill();
      stack.balancer.setDown(name, true);
    },
    async recover(stack, record) {
      await sleep(OUTAGE_MS);
      const edge = stack.edges.find((e) => e.spec.name === name)!;
      await edge.start();
      stack.balancer.setDown(name, false);
      // the tunnels that moved stay on the other node until a connection ends: end idle ones until balanced
      let ended = 0;
      await waitFor(`tunnels back on edge ${name}`, 20_000, async () => {
        ended += stack.balancer.rebalance(name, 200);
        const lacking = [...stack.balancer.tunnels().values()].filter((perNode) => (perNode.get(name) ?? 0) === 0);
        return lacking.length === 0 ? true : undefined;
      }, 200);
      record.notes.push(`restarted after ${OUTAGE_MS / 1000} s; balancer ended ${ended} idle tunnel connection(s) to move them back (${[...stack.balancer.tunnels()].map(([g, n]) => `${g}: ${[...n].map(([e, c]) => `${e}×${c}`).join(' ')}`).join('; ')})`);
    },
  };
}

/** killPostgres kills -9 the database; while it is down, the probe must get 503s; restarted after OUTAGE_MS. */
const killPostgres: Fault = {
  name: 'kill -9 PostgreSQL',
  async inject(stack, record) {
    record.notes.push(`postmaster pid ${stack.pg.postmasterPid()}`);
    stack.pg.kill();
    // what a new reservation gets while the database is down
    await sleep(500);
    try {
      await stack.control.reserve({ kind: 'domain', hostname: `while-down-${record.injectedAt}-${stack.id}.${BASE_DOMAIN}`, labels: { 'tuna.dev/soak': stack.id } });
      record.failures.push('a reservation was acknowledged while PostgreSQL was down');
    } catch (error) {
      const status = (error as { status?: number }).status ?? 0;
      const code = (error as { code?: string }).code ?? '';
      record.notes.push(`a new reservation while down: ${status} ${code}`);
      if (status !== 503) record.failures.push(`a new reservation while PostgreSQL was down got ${status} ${code}, not 503`);
    }
  },
  async recover(stack, record) {
    await sleep(OUTAGE_MS - 500);
    await stack.pg.restart();
    record.notes.push(`restarted after ${OUTAGE_MS / 1000} s`);
  },
};

/** churnIngresses creates, changes and deletes an Ingress every second for ten seconds. */
const churnIngresses: Fault = {
  name: 'route churn (an Ingress a second)',
  async inject(stack, record) {
    const api = stack.config.makeApiClient(NetworkingV1Api);
    const body = (i: number, path: string) => ({
      metadata: { name: `churn-${i}` },
      spec: { ingressClassName: 'tuna', rules: [{ host: `churn-${i}-${stack.id}.tuna.test`, http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'web', port: { name: 'http' } } } }] } }] },
    });
    for (let second = 0; second < 10; second++) {
      const i = second % 3;
      const phase = Math.floor(second / 3) % 3;
      if (phase === 0) await api.createNamespacedIngress({ namespace: stack.apps, body: body(i, '/') }).catch(() => undefined);
      else if (phase === 1) await api.replaceNamespacedIngress({ name: `churn-${i}`, namespace: stack.apps, body: body(i, '/changed') }).catch(() => undefined);
      else await api.deleteNamespacedIngress({ name: `churn-${i}`, namespace: stack.apps }).catch(() => undefined);
      await sleep(1000);
    }
    for (let i = 0; i < 3; i++) await api.deleteNamespacedIngress({ name: `churn-${i}`, namespace: stack.apps }).catch(() => undefined);
    record.notes.push('10 changes, the churn Ingresses deleted at the end');
  },
  async recover() {},
};

/** helmUpgrade rolls both operator pods to the other image tag. */
const helmUpgrade: Fault = {
  name: 'helm upgrade (rolling)',
  async inject(stack, record) {
    const current = (await stack.operatorPods())[0]?.spec?.containers[0]?.image ?? '';
    const tag = current.endsWith(`:${stack.upgradeTag}`) ? stack.image.tag : stack.upgradeTag;
    const before = new Set((await stack.operatorPods()).map((p) => p.metadata?.name));
    await runHelm(stack.helm, ['upgrade', 'tuna', CHART, ...stack.helmFlags(tag)]);
    await waitFor('both pods replaced and ready', 300_000, async () => {
      const pods = await stack.operatorPods();
      return pods.length === 2 && pods.every((p) => !before.has(p.metadata?.name) && isReady(p)) ? true : undefined;
    }, 500);
    record.notes.push(`to tag ${tag}, rolled out after ${((Date.now() - record.injectedAt) / 1000).toFixed(1)} s`);
  },
  async recover() {},
};

/** cutLink sets a follower operator pod's eth0 down in its network namespace, and up again after OUTAGE_MS. */
function cutLink(): Fault {
  let netns = '';
  return {
    name: 'link cut (operator follower eth0 down)',
    async inject(stack, record) {
      const leader = await stack.leader();
      const pod = (await stack.operatorPods()).find((p) => p.metadata?.name !== leader);
      if (pod === undefined) throw new Error('no follower pod');
      netns = podNetworkNames(pod.metadata?.uid ?? '').netns;
      await runCommand('ip', ['-n', netns, 'link', 'set', 'eth0', 'down']);
      record.notes.push(`${pod.metadata?.name} (${netns})`);
    },
    async recover(_stack, record) {
      await sleep(OUTAGE_MS);
      await runCommand('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
      // the default route goes with the link: put it back as the kubelet made it
      await runCommand('ip', ['-n', netns, 'route', 'replace', 'default', 'via', '198.18.0.1']);
      record.notes.push(`restored after ${OUTAGE_MS / 1000} s`);
    },
  };
}

/** REMINT_TIMEOUT_MS bounds the wait for the operator to hold again what was taken from it at the edge. */
const REMINT_TIMEOUT_MS = 120_000;

/** ingressHolding is the operator's reservation of the Ingress's host and its live keys, as the edge's store lists them. */
async function ingressHolding(stack: Stack): Promise<{ reservationId: string | undefined; keyIds: string[] }> {
  const labels = { 'tuna.dev/cluster': stack.id };
  const reservation = (await stack.control.listReservations(labels)).reservations.find((r) => r.value === stack.routes.ingressHost);
  if (reservation === undefined) return { reservationId: undefined, keyIds: [] };
  const keys = (await stack.control.listTunnelKeys(labels)).tunnelKeys.filter((k) => k.reservationId === reservation.id && k.revokedAt === null);
  return { reservationId: reservation.id, keyIds: keys.map((k) => k.id) };
}

/**
 * heldAgain waits until the Ingress's host has a reservation and a live key the fault did not take
 * (`isNew`), then until a GET of it answers through both nodes; notes when each happened.
 */
async function heldAgain(stack: Stack, record: FaultRecord, isNew: (h: { reservationId: string | undefined; keyIds: string[] }) => boolean): Promise<void> {
  const held = await waitFor('the operator holding the host again', REMINT_TIMEOUT_MS, async () => {
    const h = await ingressHolding(stack).catch(() => undefined);
    return h !== undefined && h.reservationId !== undefined && h.keyIds.length > 0 && isNew(h) ? h : undefined;
  }, 250);
  const heldAt = Date.now();
  record.measures.heldAgainMs = heldAt - record.injectedAt;
  await waitFor('the host answering through both nodes', REMINT_TIMEOUT_MS, async () => {
    for (const edge of stack.edges) if (!(await answersThrough(stack, edge))) return undefined;
    return true;
  }, 250);
  record.measures.answeringMs = Date.now() - record.injectedAt;
  record.notes.push(
    `held again (reservation ${held.reservationId}, key ${held.keyIds.join(', ')}) after ${(record.measures.heldAgainMs / 1000).toFixed(1)} s, answering through both nodes after ${(record.measures.answeringMs / 1000).toFixed(1)} s`,
  );
}

/**
 * revokeKey revokes, through the control API, the operator's live keys of the Ingress's host (out
 * of band: the operator did not ask for it). The edge closes their tunnels and refuses the keys;
 * the operator must mint a new key and traffic resume.
 */
function revokeKey(): Fault {
  let revoked = new Set<string>();
  return {
    name: 'tunnel key revoked (the Ingress host)',
    async inject(stack, record) {
      const { reservationId, keyIds } = await ingressHolding(stack);
      if (reservationId === undefined || keyIds.length === 0) throw new Error(`the operator holds no live key of ${stack.routes.ingressHost}`);
      revoked = new Set(keyIds);
      for (const id of keyIds) await stack.control.revokeTunnelKey(id);
      record.revokedKeys.push(...keyIds);
      record.notes.push(`revoked ${keyIds.join(', ')} of reservation ${reservationId}`);
    },
    async recover(stack, record) {
      await heldAgain(stack, record, (h) => h.keyIds.some((k) => !revoked.has(k)));
    },
  };
}

/**
 * releaseReservation releases, through the control API, the operator's reservation of the
 * Ingress's host (the edge revokes its keys with it); the operator must reserve it again.
 */
function releaseReservation(): Fault {
  let released = '';
  return {
    name: 'reservation released (the Ingress host)',
    async inject(stack, record) {
      const { reservationId, keyIds } = await ingressHolding(stack);
      if (reservationId === undefined) throw new Error(`the operator holds no reservation of ${stack.routes.ingressHost}`);
      released = reservationId;
      await stack.control.release(reservationId);
      record.revokedKeys.push(...keyIds);
      record.releasedReservations.push(reservationId);
      record.notes.push(`released ${reservationId} (its keys ${keyIds.join(', ') || 'none'} with it)`);
    },
    async recover(stack, record) {
      await heldAgain(stack, record, (h) => h.reservationId !== released);
    },
  };
}

/** FAULTS_SHORT are the most important faults, for the short form. */
export function shortFaults(): Fault[] {
  return [killOperator('leader'), killPostgres, killEdge('A'), revokeKey(), killOperator('follower'), releaseReservation()];
}

/** FAULTS_FULL are every fault, in priority order. */
export function fullFaults(): Fault[] {
  return [killOperator('leader'), killOperator('follower'), killPostgres, churnIngresses, cutLink(), killEdge('A'), revokeKey(), killEdge('B'), helmUpgrade, releaseReservation()];
}

/** OVERLAPS are pairs run at once in the full form's second part (one injected while the other is down). */
export function overlappingFaults(): [Fault, Fault][] {
  return [
    [killEdge('B'), killOperator('leader')],
    [killPostgres, killOperator('follower')],
    [churnIngresses, killEdge('A')],
  ];
}
