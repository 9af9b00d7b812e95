import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { translateObjects } from '../../src/agent/state.js';
import type { ObjectStatus } from '../../src/model/index.js';
import { CRD_RESERVATION_REASONS } from '../../src/operator/crd-reservations.js';
import { PENDING_REASONS } from '../../src/operator/edge-reconciler.js';
import { ROUTE_GRAPH_REFUSED } from '../../src/operator/event-recorder.js';
import { correctHeldBack } from '../../src/operator/held-back.js';
import { GATEWAY_REASONS, TUNA_REASONS } from '../../src/translate/index.js';

// Every reason the translators write, as the golden files record it, comes from its API's table
// (src/translate/common/reasons.ts): Gateway API objects carry Gateway API reasons, the others tuna's.
describe('condition reasons come from one table per API', () => {
  const root = join(import.meta.dirname, '..', 'golden');
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.out.yaml'));

  const reasonsIn = (value: unknown, out: string[] = []): string[] => {
    if (Array.isArray(value)) for (const v of value) reasonsIn(v, out);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'reason' && typeof v === 'string') out.push(v);
        else reasonsIn(v, out);
      }
    }
    return out;
  };

  it('finds golden files to check', () => {
    expect(files.length).to.be.greaterThan(50);
  });

  it('uses only GATEWAY_REASONS on Gateway API objects and only TUNA_REASONS on the others', () => {
    const gateway = new Set<string>(GATEWAY_REASONS);
    const tuna = new Set<string>(TUNA_REASONS);
    const stray: string[] = [];
    let checked = 0;
    for (const file of files) {
      const doc = parse(readFileSync(join(root, file), 'utf8')) as { statuses?: { ref: { group: string; kind: string } }[] };
      for (const status of doc.statuses ?? []) {
        const table = status.ref.group === 'gateway.networking.k8s.io' ? gateway : tuna;
        for (const reason of reasonsIn(status)) {
          checked++;
          if (!table.has(reason)) stray.push(`${file}: ${status.ref.kind} reason ${reason}`);
        }
      }
    }
    expect(checked).to.be.greaterThan(500);
    expect(stray).to.deep.equal([]);
  });
});

// The operator writes from the same tables: what the edge holds back or reserves (held-back.ts,
// crd-reservation-status.ts), the finalizer's Event, a refused route graph's Warning.
describe("the operator's reasons come from the same tables", () => {
  const gateway = new Set<string>(GATEWAY_REASONS);
  const tuna = new Set<string>(TUNA_REASONS);
  const GW = 'gateway.networking.k8s.io';
  const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });

  const reasonsOf = (s: ObjectStatus): string[] => {
    const out = [...s.conditions.map((c) => c.reason), ...s.events.map((e) => e.reason)];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) (k === 'reason' && typeof v === 'string' ? out.push(v) : walk(v));
    };
    walk(s.status);
    return out;
  };

  it('lists every reason a binding is held back for, every reservation reason and the refusal in TUNA_REASONS', () => {
    const stray = [...PENDING_REASONS, ...Object.values(CRD_RESERVATION_REASONS), ROUTE_GRAPH_REFUSED].filter((r) => !tuna.has(r));
    expect(stray).to.deep.equal([]);
  });

  it('writes only GATEWAY_REASONS on a held-back Gateway and ListenerSet, and only TUNA_REASONS on a held-back Service, whatever the reason', () => {
    const state = translateObjects([
      { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'shop'), spec: { ports: [{ name: 'http', port: 80 }] } },
      { apiVersion: 'v1', kind: 'Service', metadata: meta('db', 'shop'), spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'pg', port: 5432 }] } },
      { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
      { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'shop'), spec: { gatewayClassName: 'tuna', allowedListeners: { namespaces: { from: 'Same' } }, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
      { apiVersion: `${GW}/v1`, kind: 'ListenerSet', metadata: meta('more', 'shop'), spec: { parentRef: { name: 'gw' }, listeners: [{ name: 'alt', protocol: 'HTTP', port: 8080 }] } },
      { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: meta('route', 'shop'), spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } },
    ]);
    const stray: string[] = [];
    let checked = 0;
    for (const reason of PENDING_REASONS) {
      for (const port of [undefined, 80]) {
        const pending = [
          { bindingId: 'binding/address/shop/gw', reason, message: `held back: ${reason}`, ...(port !== undefined ? { port } : {}) },
          { bindingId: 'binding/tcp-port/shop/db/5432', reason, message: `held back: ${reason}` },
        ];
        for (const s of correctHeldBack(state.statuses, state.graph, pending)) {
          if (!['Gateway', 'ListenerSet', 'Service'].includes(s.ref.kind)) continue;
          const table = s.ref.group === GW ? gateway : tuna;
          for (const r of reasonsOf(s)) {
            checked++;
            if (!table.has(r)) stray.push(`${s.ref.kind} ${s.ref.name} held back for ${reason}${port !== undefined ? ` (port ${port})` : ''}: reason ${r}`);
          }
        }
      }
    }
    expect(checked).to.be.greaterThan(100);
    expect(stray).to.deep.equal([]);
  });
});
