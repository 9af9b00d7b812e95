// soak.ts — one soak run: the stack up, the request loop at a fixed rate, the faults one at a time
// (then two at once in the full form), and at the end the table and the checks.
import { loadavg } from 'node:os';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import { waitFor } from '../cluster/cluster-env.js';
import { fullFaults, overlappingFaults, shortFaults } from './soak-faults.js';
import type { Fault, FaultRecord } from './soak-faults.js';
import { figuresOf } from './soak-processes.js';
import type { ProcessFigures } from './soak-processes.js';
import { findContainerProcess } from '../cluster/pod-exec.js';
import { decodeKeyEntry, keyShardNames } from '../../src/operator/secret-tunnel-keys.js';
import { checksOf, formatReport } from './soak-report.js';
import type { Check, RoundFigures, SoakResult } from './soak-report.js';
import { GW, startStack } from './soak-stack.js';
import type { Stack } from './soak-stack.js';
import { KINDS, TrafficLoop } from './soak-traffic.js';

/** SoakOptions says how long and how hard. */
export interface SoakOptions {
  /** 0 is the short form: the most important faults once, about 2-3 minutes of traffic */
  minutes: number;
  ratePerSecond: number;
  /** quiet time after each fault before the next */
  settleMs: number;
  log: (line: string) => void;
}

/** SoakReport is the printed table and whether every target and invariant held. */
export interface SoakReport {
  text: string;
  checks: Check[];
  ok: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** runSoak brings the stack up, runs the soak and tears everything down. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const stack = await startStack(options.log);
  try {
    return await soakOn(stack, options);
  } finally {
    await stack.close();
  }
}

/** everyRouteAnswers waits until each kind of request answers through each edge node. */
async function everyRouteAnswers(loop: TrafficLoop, stack: Stack, timeoutMs: number): Promise<void> {
  for (const edge of stack.edges) {
    for (const kind of KINDS) {
      await waitFor(`${kind} through edge ${edge.spec.name}`, timeoutMs, async () => ((await loop.send(kind, edge)).outcome === 'ok' ? true : undefined), 500);
    }
  }
}

async function soakOn(stack: Stack, options: SoakOptions): Promise<SoakReport> {
  const { log } = options;
  // the warm-up requests are not part of the run's records
  const warmup = new TrafficLoop(stack, options.ratePerSecond, 3000);
  log('waiting for every route through both edges');
  await everyRouteAnswers(warmup, stack, 300_000);

  const loop = new TrafficLoop(stack, options.ratePerSecond, 3000);
  // the looks at what the statuses claim send requests of their own, not counted in the run's table
  const checker = new TrafficLoop(stack, options.ratePerSecond, 3000);
  const claimsSeen: ClaimsSeen[] = [];
  const look = async (after: string): Promise<void> => {
    claimsSeen.push({ after, ...(await statusClaims(stack, checker).catch((e: unknown) => ({ claims: {}, notAnswering: [`the statuses could not be read: ${String(e)}`] }))) });
  };
  const faults: FaultRecord[] = [];
  const rounds: RoundFigures[] = [];
  const figures = async (round: number, after: string): Promise<RoundFigures> => ({
    round,
    after,
    perEdge: Object.fromEntries(stack.edges.map((e) => [e.spec.name, { pid: e.pid ?? 0, ...(e.pid === undefined ? { fds: 0, rssKiB: 0 } : figuresOf(e.pid)) }])),
    perOperator: await operatorFigures(stack),
  });
  const startedAt = Date.now();
  const loadAverageAtStart = loadavg();
  loop.start();
  await sleep(options.settleMs);
  rounds.push(await figures(0, 'the start'));

  const runOne = async (fault: Fault): Promise<FaultRecord> => {
    const record: FaultRecord = { name: fault.name, injectedAt: Date.now(), recoveredAt: 0, windowEnd: 0, notes: [], failures: [], measures: {}, revokedKeys: [], releasedReservations: [] };
    faults.push(record);
    log(`fault: ${fault.name}`);
    try {
      await fault.inject(stack, record);
      record.recoveredAt = Date.now();
      await fault.recover(stack, record);
    } catch (error) {
      record.failures.push(String(error));
    }
    record.recoveredAt = Date.now();
    return record;
  };
  const settle = async (records: FaultRecord[]): Promise<void> => {
    await sleep(options.settleMs);
    for (const r of records) r.windowEnd = Date.now();
  };

  // the full form runs rounds of every fault one at a time, then the overlapping pairs, starting no
  // fault after its minutes; the short form runs its faults once
  const deadline = startedAt + options.minutes * 60_000;
  const isOver = () => options.minutes > 0 && Date.now() > deadline;
  for (let round = 1; !isOver(); round++) {
    for (const fault of options.minutes === 0 ? shortFaults() : fullFaults()) {
      if (isOver()) break;
      await settle([await runOne(fault)]);
      rounds.push(await figures(round, fault.name));
      await look(`${fault.name}, round ${round}`);
    }
    for (const [first, second] of options.minutes === 0 ? [] : overlappingFaults()) {
      if (isOver()) break;
      const a = runOne(first);
      await sleep(1000);
      const both = await Promise.all([a, runOne(second)]);
      await settle(both);
      rounds.push(await figures(round, `${first.name} + ${second.name}`));
      await look(`${first.name} + ${second.name}, round ${round}`);
    }
    log(`round ${round} done`);
    if (options.minutes === 0) break;
  }
  await loop.stop();
  const endedAt = Date.now();
  const endChecks = await finalChecks(stack, loop, checker, faults, claimsSeen);
  const result: SoakResult = {
    minutes: options.minutes, startedAt, endedAt, samples: loop.samples, probes: loop.probes, faults, rounds, endChecks, loadAverageAtStart, loadAverage: loadavg(),
  };
  const checks = checksOf(result);
  const text = formatReport(result, checks);
  return { text, checks, ok: checks.every((c) => c.ok) };
}

/** ClaimsSeen is one look at what the statuses claim served and which of those routes did not answer. */
interface ClaimsSeen {
  after: string;
  claims: Record<string, boolean>;
  notAnswering: string[];
}

/**
 * statusClaims reads what the statuses claim served (the Ingress's and the Service's
 * `status.loadBalancer`, the Gateway's `Programmed`, the GRPCRoute's `Accepted`) and sends each
 * route so claimed through each node (up to three tries), naming those that did not answer.
 */
async function statusClaims(stack: Stack, checker: TrafficLoop): Promise<Omit<ClaimsSeen, 'after'>> {
  const ingress = await stack.config.makeApiClient(NetworkingV1Api).readNamespacedIngressStatus({ name: 'site', namespace: stack.apps });
  const gateway = (await stack.config.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: GW, version: 'v1', namespace: stack.apps, plural: 'gateways', name: 'gw' })) as {
    status?: { conditions?: { type: string; status: string }[] };
  };
  const service = await stack.config.makeApiClient(CoreV1Api).readNamespacedServiceStatus({ name: 'sink', namespace: stack.apps });
  const grpcRoute = (await stack.config.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: GW, version: 'v1', namespace: stack.apps, plural: 'grpcroutes', name: 'grpc' })) as {
    status?: { parents?: { conditions?: { type: string; status: string }[] }[] };
  };
  const isProgrammed = gateway.status?.conditions?.some((c) => c.type === 'Programmed' && c.status === 'True') === true;
  const isIngressServed = (ingress.status?.loadBalancer?.ingress?.length ?? 0) > 0;
  const claims: Record<string, boolean> = {
    h1: isIngressServed,
    h2: isIngressServed,
    ws: isIngressServed,
    upload: isIngressServed,
    gateway: isProgrammed,
    grpc: isProgrammed && grpcRoute.status?.parents?.some((p) => p.conditions?.some((c) => c.type === 'Accepted' && c.status === 'True')) === true,
    tcp: (service.status?.loadBalancer?.ingress?.length ?? 0) > 0,
  };
  const notAnswering: string[] = [];
  for (const edge of stack.edges) {
    for (const kind of KINDS) {
      if (!claims[kind]) continue;
      let last = '';
      for (let i = 0; i < 3 && last !== 'ok'; i++) last = (await checker.send(kind, edge)).outcome;
      if (last !== 'ok') notAnswering.push(`${kind} via ${edge.spec.name} (${last})`);
    }
  }
  return { claims, notAnswering };
}

/** operatorFigures are the descriptors and memory of each operator pod's process (found in the pod's network namespace), by pod name. */
async function operatorFigures(stack: Stack): Promise<Record<string, ProcessFigures & { pid: number }>> {
  const out: Record<string, ProcessFigures & { pid: number }> = {};
  for (const pod of await stack.operatorPods().catch(() => [])) {
    const pid = await findContainerProcess(pod.metadata?.uid ?? '', (argv) => argv.includes('operator')).catch(() => 0);
    out[pod.metadata?.name ?? '?'] = { pid, ...(pid === 0 ? { fds: 0, rssKiB: 0 } : figuresOf(pid)) };
  }
  return out;
}

/** operatorHeldKeys are the keys the operator's Secrets hold (what it was acknowledged and stored), by key id → binding id. */
async function operatorHeldKeys(stack: Stack): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const name of keyShardNames()) {
    const secret = await stack.core.readNamespacedSecret({ name, namespace: stack.namespace }).catch(() => undefined);
    for (const value of Object.values(secret?.data ?? {})) {
      const entry = decodeKeyEntry(Buffer.from(value, 'base64').toString('utf8'));
      if (entry.ok) held.set(entry.value.keyId, entry.value.bindingId);
    }
  }
  return held;
}

/**
 * finalChecks: every reservation and key the probe saw acknowledged is in the store, and every key
 * the operator's Secrets hold is live there; every route a status calls served answers through
 * both edges; the churned Ingresses are gone.
 */
async function finalChecks(stack: Stack, loop: TrafficLoop, checker: TrafficLoop, faults: readonly FaultRecord[], claimsSeen: ClaimsSeen[]): Promise<Check[]> {
  const checks: Check[] = [];
  const labels = { 'tuna.dev/soak': stack.id };
  const acked = loop.probes.filter((p) => p.status === 201);
  const reservations = new Set((await stack.control.listReservations(labels)).reservations.map((r) => r.id));
  const keys = new Set((await stack.control.listTunnelKeys(labels)).tunnelKeys.filter((k) => k.revokedAt === null).map((k) => k.id));
  const lost = acked.filter((p) => !reservations.has(p.reservationId ?? '') || !keys.has(p.keyId ?? ''));
  checks.push({
    name: 'invariant: no acknowledged reservation or tunnel key lost (the store against what the probe saw acknowledged)',
    ok: lost.length === 0 && acked.length > 0,
    detail: `${acked.length} acknowledged, ${lost.length} missing${lost.length > 0 ? `: ${lost.map((p) => `${p.reservationId}/${p.keyId}`).join(', ')}` : ''}`,
  });
  const operatorLabels = { 'tuna.dev/cluster': stack.id };
  const operatorReservations = (await stack.control.listReservations(operatorLabels)).reservations;
  // what the operator stored as acknowledged (its keys' Secrets) against what the store holds live;
  // the keys a fault revoked on purpose are not lost, but none may still be held
  const liveOperatorKeys = new Set((await stack.control.listTunnelKeys(operatorLabels)).tunnelKeys.filter((k) => k.revokedAt === null).map((k) => k.id));
  const heldKeys = await operatorHeldKeys(stack);
  const takenOnPurpose = new Set(faults.flatMap((f) => f.revokedKeys));
  const notLive = [...heldKeys].filter(([keyId]) => !liveOperatorKeys.has(keyId));
  checks.push({
    name: "invariant: every key the operator's Secrets hold is live in the store (none lost, none of those revoked on purpose still held)",
    ok: notLive.length === 0 && heldKeys.size > 0,
    detail: `${heldKeys.size} held, ${notLive.length} not live${notLive.length > 0 ? `: ${notLive.map(([k, b]) => `${k} (${b}${takenOnPurpose.has(k) ? ', revoked by the soak' : ''})`).join(', ')}` : ''}; ${takenOnPurpose.size} revoked by the faults, ${faults.reduce((n, f) => n + f.releasedReservations.length, 0)} reservation(s) released`,
  });
  const held = new Set(operatorReservations.map((r) => r.value));
  const wanted = [stack.routes.ingressHost, stack.routes.gatewayAddress, String(stack.routes.tcpPort)];
  const released = new Set(faults.flatMap((f) => f.releasedReservations));
  const stillReleased = operatorReservations.filter((r) => released.has(r.id));
  checks.push({
    name: "invariant: the operator's reservations of the three routes are held",
    ok: wanted.every((w) => held.has(w)) && stillReleased.length === 0,
    detail: `held ${wanted.filter((w) => held.has(w)).length} of ${wanted.length} (${operatorReservations.length} reservations of the cluster)${stillReleased.length > 0 ? `; released ones listed: ${stillReleased.map((r) => r.id).join(', ')}` : ''}`,
  });

  const atEnd = await statusClaims(stack, checker);
  claimsSeen.push({ after: 'the end', ...atEnd });
  const broken = claimsSeen.filter((c) => c.notAnswering.length > 0);
  checks.push({
    name: 'invariant: every route a status calls served (Ingress/Service loadBalancer, Gateway Programmed, GRPCRoute Accepted) answers, after each fault settled and at the end',
    ok: broken.length === 0,
    detail:
      `${claimsSeen.length} looks; at the end claims ${Object.entries(atEnd.claims).map(([k, v]) => `${k}:${v ? 'served' : 'not'}`).join(' ')}; ` +
      `not answering: ${broken.map((c) => `after ${c.after}: ${c.notAnswering.join(', ')}`).join('; ') || 'none'}`,
  });
  const churn = (await stack.config.makeApiClient(NetworkingV1Api).listNamespacedIngress({ namespace: stack.apps })).items.filter((i) => i.metadata?.name?.startsWith('churn-'));
  const churnHeld = operatorReservations.filter((r) => r.value.startsWith('churn-'));
  checks.push({
    name: 'invariant: the churned Ingresses and their reservations are gone',
    ok: churn.length === 0 && churnHeld.length === 0,
    detail: `${churn.length} Ingress(es), ${churnHeld.length} reservation(s) left`,
  });
  return checks;
}
