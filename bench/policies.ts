/**
 * npm run bench -- policies: the CPU cost per request of the route policies in the agent's data
 * plane, in process (no network, so a loaded machine disturbs it far less than a tunnel run): the
 * routing and planning every request pays (`resolveRequest` + `planRequest`), and on top of it
 * the policy checks of a remembered basic-auth credential, a rate limit, both, and a JWT (a
 * remembered token, and tokens verified each time: ES256 and RS256), each against no policy in
 * the same run. Prints a table for docs/policies.md and writes it to its section of
 * docs/benchmarks.md.
 */
import bcrypt from 'bcryptjs';
import type { IncomingHttpHeaders } from 'node:http';
import { resolveRequest } from '../src/dataplane/http-handler.js';
import type { ConnectionFacts } from '../src/dataplane/http-handler.js';
import { checkPolicies, decoratePlan } from '../src/dataplane/policies/apply.js';
import type { PolicyRequest } from '../src/dataplane/policies/apply.js';
import { PolicyCompiler } from '../src/dataplane/policies/compile.js';
import { planRequest } from '../src/dataplane/request-plan.js';
import { compileRouteTable } from '../src/dataplane/router.js';
import type { RouteTable } from '../src/dataplane/router.js';
import type { RoutePolicies, RouteGraph } from '../src/model/index.js';
import { canonicalize, emptyGraph } from '../src/model/index.js';
import { signToken, testJwtPolicy, testSigner } from '../test/support/jwt-keys.js';
import { machineLine, writeSection } from './report.js';

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
type Request = { method: string; target: string; authority: string; headers: IncomingHttpHeaders };

/** request is the benchmark's GET with `auth` as its Authorization header. */
const request = (auth: string): Request => ({
  method: 'GET',
  target: '/1k',
  authority: 'app.test',
  headers: { ':method': 'GET', ':path': '/1k', ':authority': 'app.test', 'user-agent': 'bench', accept: '*/*', authorization: auth, 'x-forwarded-for': '198.51.100.7' },
});

/** perRequest runs one request's data-plane work `n` times, cycling through `requests`, and returns nanoseconds per request. */
async function perRequest(table: RouteTable, requests: readonly Request[], n: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const routed = resolveRequest(table, requests[i % requests.length]!, conn);
    if (!('route' in routed)) throw new Error('no route');
    const p = routed.policies;
    const req: PolicyRequest = { facts: routed.facts, publicScheme: 'https', isUpgrade: false };
    if (p) {
      const verdict = checkPolicies(p, req);
      const local = verdict instanceof Promise ? await verdict : verdict;
      if (local) throw new Error(`refused: ${local.status}`);
    }
    const plan = planRequest(p?.route ?? routed.route, routed.facts);
    if (plan.kind !== 'forward') throw new Error('not forwarded');
    if (p) decoratePlan(p, plan, req);
  }
  return Number(process.hrtime.bigint() - start) / n;
}

/**
 * More distinct tokens than a checker remembers (1,024, the oldest forgotten first): cycling
 * through them, every request verifies a signature.
 */
const freshTokens = 1500;

/** runPoliciesBench prints ns per request for each variant, best of fifteen interleaved runs. */
export async function runPoliciesBench(): Promise<void> {
  const hash = await bcrypt.hash('s3cret', 10);
  const basicAuth = { realm: 'tuna', users: [{ name: 'ann', hash }] };
  const rateLimit = { requests: 1e9, periodSeconds: 1, burst: 1e9 };
  // JWT: a key pair made for the run, one claim copied into a header, a scope required
  const es = testSigner('es', 'ES256');
  const rs = testSigner('rs', 'RS256');
  const jwt = testJwtPolicy([es, rs], { claimToHeaders: [{ claim: 'sub', header: 'X-User' }], require: [{ claim: 'scope', match: 'scope', value: 'read' }] });
  const tokens = async (signer: typeof es, count: number): Promise<Request[]> =>
    Promise.all(Array.from({ length: count }, async (_, i) => request(`Bearer ${await signToken(signer, { sub: `user-${i}`, scope: 'read write', exp: Math.floor(Date.now() / 1000) + 3600 })}`)));
  const basicRequest = [request(authorization)];
  const variants: [string, RoutePolicies | undefined, Request[], number][] = [
    ['no policy', undefined, basicRequest, 50_000],
    ['basic auth (remembered)', { basicAuth }, basicRequest, 50_000],
    ['rate limit', { rateLimit }, basicRequest, 50_000],
    ['basic auth + rate limit', { basicAuth, rateLimit }, basicRequest, 50_000],
    ['jwt ES256 (remembered token)', { jwt }, await tokens(es, 1), 50_000],
    ['jwt ES256 (each token verified)', { jwt }, await tokens(es, freshTokens), 5_000],
    ['jwt RS256 (each token verified)', { jwt }, await tokens(rs, freshTokens), 5_000],
  ];
  // Variants are interleaved and the best of 15 runs is kept: on a shared machine the minimum is
  // the run least disturbed by other processes.
  const tables: [string, RouteTable, Request[], number][] = [];
  for (const [name, policies, requests, n] of variants) {
    const compiler = new PolicyCompiler(() => performance.now());
    const table = compileRouteTable(graphWith(policies), (r, b) => compiler.compile(r, b));
    await perRequest(table, requests, 2_000); // warm-up, and the one bcrypt verification
    tables.push([name, table, requests, n]);
  }
  const best = new Map<string, number>();
  for (let i = 0; i < 15; i++) for (const [name, table, requests, n] of tables) best.set(name, Math.min(best.get(name) ?? Infinity, await perRequest(table, requests, n)));
  const rows = [...best];
  const base = rows[0]![1];
  const lines = [
    '| variant | ns per request (route + plan + policies) | added by the policies |',
    '| --- | --- | --- |',
    ...rows.map(([name, ns]) => `| ${name} | ${ns.toFixed(0)} | ${name === 'no policy' ? '—' : `+${(ns - base).toFixed(0)} ns`} |`),
  ];
  for (const line of lines) console.log(line);
  writeSection(
    'policies',
    `## policies: the data plane's per-request cost of route policies, in process

\`npm run bench -- policies\` (bench/policies.ts): routing, planning and the policy checks of one
request, no network; variants interleaved, the best of 15 runs kept (50,000 requests a run; 5,000
for the tokens verified each time, cycling through ${freshTokens} tokens, more than the 1,024 a checker
remembers). ${machineLine()}.

${lines.join('\n')}`,
  );
}
