/**
 * Properties every Gateway API translation must have, checked over all golden inputs of the gateway
 * folder: conditions carry observedGeneration, unresolved backends never name their target, ids
 * nest under their parents, claims match the address binding, and route status names tuna.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { Condition, ObjectStatus } from '../../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'gateway');
const inputs = readdirSync(dir).filter((f) => f.endsWith('.in.yaml')).sort();

function translate(file: string) {
  const objects = parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => d.toJS() as { metadata?: { generation?: number } });
  const { snapshot } = snapshotFromObjects(objects);
  return { objects, result: translateSnapshot(snapshot) };
}

function statusConditions(s: ObjectStatus): Condition[] {
  const body = (s.status ?? {}) as {
    conditions?: Condition[];
    listeners?: { conditions: Condition[] }[];
    parents?: { conditions: Condition[] }[];
  };
  return [...(body.conditions ?? []), ...(body.listeners ?? []).flatMap((l) => l.conditions), ...(body.parents ?? []).flatMap((p) => p.conditions)];
}

describe('Gateway API translation invariants', () => {
  it('has golden inputs to check', () => {
    expect(inputs.length).to.be.greaterThan(40);
  });

  for (const file of inputs) {
    describe(file.replace(/\.in\.yaml$/, ''), () => {
      const { result } = translate(file);
      const gatewayStatuses = result.statuses.filter((s) => s.ref.group === 'gateway.networking.k8s.io');

      it('stamps every status condition with the generation of its object', () => {
        for (const s of gatewayStatuses)
          for (const c of statusConditions(s)) expect(c.observedGeneration, `${s.ref.kind} ${s.ref.name} ${c.type}`).to.equal(s.observedGeneration);
      });

      it('names tuna as the controller of every route parent status', () => {
        for (const s of gatewayStatuses) {
          const parents = (s.status as { parents?: { controllerName: string }[] } | undefined)?.parents ?? [];
          for (const p of parents) expect(p.controllerName).to.equal('tuna.dev/gateway-controller');
        }
      });

      it('keeps unresolved backends anonymous and answering 500', () => {
        const backends = [
          ...result.graph.virtualHosts.flatMap((v) => v.routes.flatMap((r) => r.backends)),
          ...result.graph.streamRoutes.flatMap((s) => s.backends),
        ];
        for (const b of backends.filter((x) => x.kind === 'unavailable')) {
          expect(Object.keys(b).sort()).to.deep.equal(['kind', 'reason', 'statusCode', 'weight']);
          expect(b.statusCode).to.equal(500);
        }
      });

      it('nests every route id under its virtual host and every listener under its binding', () => {
        for (const l of result.graph.listeners) expect(l.id.startsWith(`${l.bindingId}/listener/`)).to.equal(true);
        for (const v of result.graph.virtualHosts) {
          expect(v.id).to.equal(`${v.listenerId}/vhost/${v.hostname}`);
          for (const r of v.routes) expect(r.id.endsWith(`/on/${v.id}`), r.id).to.equal(true);
        }
      });

      it('claims on an address binding only precise hostnames served on HTTP 80 or HTTPS 443', () => {
        for (const b of result.graph.bindings.filter((x) => x.kind === 'address')) {
          for (const h of b.hostnames) {
            expect(h.startsWith('*'), h).to.equal(false);
            const served = result.graph.virtualHosts.some((v) => {
              const l = result.graph.listeners.find((x) => x.id === v.listenerId);
              return v.hostname === h && l?.bindingId === b.id && ((l.protocol === 'http' && l.port === 80) || (l.protocol === 'https' && l.port === 443));
            });
            expect(served, `${b.id} claims ${h}`).to.equal(true);
          }
        }
      });
    });
  }
});
