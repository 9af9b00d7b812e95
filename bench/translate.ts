/**
 * translate benchmark: a full translation of 10,000 Ingress paths + 5,000 HTTPRoute rules + 1,000
 * LoadBalancer Services (issue "Core", part 5). Prints time and heap; target < 1 s and < 300 MiB.
 */
import { validate } from '../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../src/translate/index.js';
import type { Snapshot } from '../src/translate/index.js';
import { machineLine, median, writeSection } from './report.js';

const created = '2026-01-01T00:00:00Z';
const meta = (namespace: string, name: string) => ({ namespace, name, creationTimestamp: created, generation: 1, uid: `${namespace}-${name}` });

/** buildSnapshot makes the benchmark's objects: `ingresses`×10 paths, `routes`×10 rules, `lbServices`. */
export function buildSnapshot(ingresses = 1000, routes = 500, lbServices = 1000): Snapshot {
  const objects: unknown[] = [];
  const namespaces = 50;
  for (let n = 0; n < namespaces; n++) {
    objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}`, labels: { team: `t${n % 5}` } } });
    for (let s = 0; s < 10; s++)
      objects.push({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta(`ns-${n}`, `svc-${s}`),
        spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] },
      });
  }
  for (let i = 0; i < ingresses; i++) {
    const ns = `ns-${i % namespaces}`;
    objects.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta(ns, `ing-${i}`),
      spec: {
        ingressClassName: 'tuna',
        rules: [
          {
            host: `app-${i % 500}.example.com`,
            http: {
              paths: Array.from({ length: 10 }, (_, p) => ({
                path: `/i${i}/p${p}`,
                pathType: p % 3 === 0 ? 'Exact' : 'Prefix',
                backend: { service: { name: `svc-${p}`, port: { number: 80 } } },
              })),
            },
          },
        ],
      },
    });
  }
  const gateways = 10;
  objects.push({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'tuna', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } });
  for (let g = 0; g < gateways; g++)
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: meta(`ns-${g}`, `gw-${g}`),
      spec: { gatewayClassName: 'tuna', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
    });
  for (let r = 0; r < routes; r++) {
    const ns = `ns-${r % namespaces}`;
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: meta(ns, `route-${r}`),
      spec: {
        parentRefs: [{ name: `gw-${r % gateways}`, namespace: `ns-${r % gateways}` }],
        hostnames: [`route-${r % 200}.example.org`],
        rules: Array.from({ length: 10 }, (_, k) => ({
          matches: [{ path: { type: 'PathPrefix', value: `/r${r}/k${k}` }, headers: [{ name: 'x-k', value: `${k}` }] }],
          filters: k % 4 === 0 ? [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-b', value: '1' }] } }] : [],
          backendRefs: [
            { name: `svc-${k}`, port: 80, weight: 3 },
            { name: `svc-${(k + 1) % 10}`, port: 80, weight: 1 },
          ],
        })),
      },
    });
  }
  for (let l = 0; l < lbServices; l++)
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(`ns-${l % namespaces}`, `lb-${l}`),
      spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'tcp', port: 5432, protocol: 'TCP' }] },
    });
  return snapshotFromObjects(objects).snapshot;
}

function countRoutes(snapshot: Snapshot): { ingressPaths: number; httpRouteRules: number; lbServices: number } {
  return {
    ingressPaths: snapshot.ingresses.reduce((n, i) => n + (i.spec?.rules ?? []).reduce((m, r) => m + (r.http?.paths.length ?? 0), 0), 0),
    httpRouteRules: snapshot.httpRoutes.reduce((n, r) => n + (r.spec.rules?.length ?? 0), 0),
    lbServices: snapshot.services.filter((s) => s.spec?.type === 'LoadBalancer').length,
  };
}

/** runTranslateBench translates the snapshot several times and reports medians. */
export function runTranslateBench(runs = 7): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const snapshot = buildSnapshot();
  const counts = countRoutes(snapshot);
  const times: number[] = [];
  const heaps: number[] = [];
  let graphRoutes = 0;
  for (let i = 0; i < runs; i++) {
    gc();
    const before = process.memoryUsage().heapUsed;
    const t0 = process.hrtime.bigint();
    const result = translateSnapshot(snapshot);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const heap = process.memoryUsage().heapUsed;
    times.push(ms);
    heaps.push((heap - before) / 2 ** 20);
    graphRoutes = result.graph.virtualHosts.reduce((n, v) => n + v.routes.length, 0) + result.graph.streamRoutes.length;
    if (i === 0 && validate(result.graph).length > 0) throw new Error('invalid graph');
  }
  gc();
  const totalHeap = process.memoryUsage().heapUsed / 2 ** 20;
  const t = median(times);
  const h = median(heaps);
  const lines = [
    `input: ${counts.ingressPaths} Ingress paths, ${counts.httpRouteRules} HTTPRoute rules, ${counts.lbServices} LoadBalancer Services`,
    `graph: ${graphRoutes} routes (HTTP routes + stream routes)`,
    `translate: median ${t.toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}, ${runs} runs)`,
    `heap allocated during one translate: median ${h.toFixed(0)} MiB; heap in use after (snapshot + last result): ${totalHeap.toFixed(0)} MiB`,
  ];
  for (const l of lines) console.log(`translate: ${l}`);
  writeSection(
    'translate',
    `## translate\n\nFull translation of one snapshot (\`bench/translate.ts\`); target < 1 s and < 300 MiB heap.\n` +
      `Machine: ${machineLine()}.\n\n| figure | value |\n|---|---|\n` +
      `| input | ${counts.ingressPaths} Ingress paths + ${counts.httpRouteRules} HTTPRoute rules + ${counts.lbServices} LB Services |\n` +
      `| routes in the graph | ${graphRoutes} |\n` +
      `| time, median of ${runs} | ${t.toFixed(0)} ms (min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)}) |\n` +
      `| heap growth during one translate, median | ${h.toFixed(0)} MiB |\n` +
      `| heap in use after (snapshot + result) | ${totalHeap.toFixed(0)} MiB |\n`,
  );
}
