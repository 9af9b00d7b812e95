/**
 * npm run bench -- policies: the CPU cost per request of the route policies in the agent's data
 * plane, in process (no network, so a loaded machine disturbs it far less than a tunnel run): the
 * routing and planning every request pays (`resolveRequest` + `planRequest`), and on top of it
 * the policy checks of a remembered basic-auth credential, a rate limit, and both. Prints a table
 * for docs/policies.md; rewrites nothing.
 */
import bcrypt from 'bcryptjs';
import type { IncomingHttpHeaders } from 'node:http';
import { resolveRequest } from '../src/dataplane/http-handler.js';
import type { ConnectionFacts } from '../src/dataplane/http-handler.js';
import { checkPolicies } from '../src/dataplane/policies/apply.js';
import { PolicyCompiler } from '../src/dataplane/policies/compile.js';
import { planRequest } from '../src/dataplane/request-plan.js';
import { compileRouteTable } from '../src/dataplane/router.js';
import type { RouteTable } from '../src/dataplane/router.js';
import type { RoutePolicies, RouteGraph } from '../src/model/index.js';
import { canonicalize, emptyGraph } from '../src/model/index.js';

const authorization = `Basic ${Buffer.from('ann:s3cret').toString('base64')}`;

function graphWith(policies: RoutePolicies | undefined): RouteGraph {
  const g = emptyGraph();
  const id = 'binding/host/app.test';
  const source = { group: 'bench', kind: 'Bench', name: 'b' };
  g.bindings.push({ id, kind: 'host', hostnames: ['app.test'], source, ...(policies ? { policies } : {}) });
  g.listeners.push({ id: `${id}/listener/http`, bindingId: id, name: 'http', port: 80, protocol: 'http', source });
  g.virtualHosts.push({
    id: `${id}/listener/http/vhost/app.test`,
    listenerId: `${id}/listener/http`,
    hostname: 'app.test',
    routes: [
      {
        id: 'r',
        source,
        origin: { created: '', key: 'b/b', rule: 0, match: 0 },
        match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [] },
        filters: [],
        backends: [{ kind: 'service', namespace: 'b', service: 'b', port: 80, portName: 'http', protocol: 'http', weight: 1 }],
      },
    ],
  });
  return canonicalize(g);
}

const conn: ConnectionFacts = { clientAddress: '198.51.100.7', scheme: 'https', entry: { bindingId: 'binding/host/app.test', publicPort: 443, publicProtocol: 'https' } };
const headers: IncomingHttpHeaders = { ':method': 'GET', ':path': '/1k', ':authority': 'app.test', 'user-agent': 'bench', accept: '*/*', authorization, 'x-forwarded-for': '198.51.100.7' };
const ds = { method: 'GET', target: '/1k', authority: 'app.test', headers };

/** perRequest runs one request's data-plane work `n` times and returns nanoseconds per request. */
async function perRequest(table: RouteTable, n: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const routed = resolveRequest(table, ds, conn);
    if (!('route' in routed)) throw new Error('no route');
    if (routed.policies) {
      const verdict = checkPolicies(routed.policies, { facts: routed.facts, publicScheme: 'https', isUpgrade: false });
      const local = verdict instanceof Promise ? await verdict : verdict;
      if (local) throw new Error(`refused: ${local.status}`);
    }
    const plan = planRequest(routed.policies?.route ?? routed.route, routed.facts);
    if (plan.kind !== 'forward') throw new Error('not forwarded');
  }
  return Number(process.hrtime.bigint() - start) / n;
}

/** runPoliciesBench prints ns per request for each variant, best of fifteen interleaved runs. */
export async function runPoliciesBench(): Promise<void> {
  const hash = await bcrypt.hash('s3cret', 10);
  const basicAuth = { realm: 'tuna', users: [{ name: 'ann', hash }] };
  const rateLimit = { requests: 1e9, periodSeconds: 1, burst: 1e9 };
  const variants: [string, RoutePolicies | undefined][] = [
    ['no policy', undefined],
    ['basic auth (remembered)', { basicAuth }],
    ['rate limit', { rateLimit }],
    ['basic auth + rate limit', { basicAuth, rateLimit }],
  ];
  // Variants are interleaved and the best of 15 runs is kept: on a shared machine the minimum is
  // the run least disturbed by other processes.
  const n = 50_000;
  const tables: [string, RouteTable][] = [];
  for (const [name, policies] of variants) {
    const compiler = new PolicyCompiler(() => performance.now());
    const table = compileRouteTable(graphWith(policies), (r, b) => compiler.compile(r, b));
    await perRequest(table, 2_000); // warm-up, and the one bcrypt verification
    tables.push([name, table]);
  }
  const best = new Map<string, number>();
  for (let i = 0; i < 15; i++) for (const [name, table] of tables) best.set(name, Math.min(best.get(name) ?? Infinity, await perRequest(table, n)));
  const rows = [...best];
  const base = rows[0]![1];
  console.log('| variant | ns per request (route + plan + policies) | added by the policies |');
  console.log('| --- | --- | --- |');
  for (const [name, ns] of rows) console.log(`| ${name} | ${ns.toFixed(0)} | ${name === 'no policy' ? '—' : `+${(ns - base).toFixed(0)} ns`} |`);
}
