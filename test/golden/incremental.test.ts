/**
 * IncrementalTranslation against translateSnapshot over every golden input, change by change: the
 * objects added one at a time, an Ingress of the test's own added, changed and removed, then each Ingress changed (its first host moved onto another
 * Ingress's, then made the oldest, so conflicts flip) and restored, then the objects deleted one
 * at a time. After every step the incremental result must be byte-identical to a full translation
 * of the same objects. Run twice: objects as manifest files give them (no uid, compared by content)
 * and as an API server does (uid and a resourceVersion that moves on every change).
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { IncrementalTranslation, snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';
import type { TranslateOptions } from '../../src/translate/index.js';
import { loadObjects, shuffle } from './inputs.js';

const root = dirname(fileURLToPath(import.meta.url));

interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string };
  spec?: { rules?: { host?: string }[] } & Partial<TranslateOptions>;
}

const render = (result: unknown): string => stringify(result, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });

function splitOptions(objects: unknown[]): { options: Partial<TranslateOptions>; rest: Obj[] } {
  const options: Partial<TranslateOptions> = {};
  const rest: Obj[] = [];
  for (const o of objects as Obj[]) {
    if (o.apiVersion === 'test.tuna.dev/v1' && o.kind === 'TranslateOptions') Object.assign(options, o.spec);
    else rest.push(o);
  }
  return { options, rest };
}

const isIngress = (o: Obj): boolean => o.kind === 'Ingress' && (o.apiVersion ?? '').startsWith('networking.k8s.io/');

/** Steps are the object sets one after the other: each a label and the objects at that point. */
function stepsOf(objects: Obj[]): { label: string; objects: Obj[] }[] {
  const steps: { label: string; objects: Obj[] }[] = [];
  let current: Obj[] = [];
  const name = (o: Obj): string => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  for (const o of objects) {
    current = [...current, o];
    steps.push({ label: `add ${name(o)}`, objects: current });
  }
  // an Ingress of its own, added, changed and removed: Ingress-only changes for every input, so the
  // other translators' kept output is handed to merge and the passes after it again and again
  const probe = (host: string): Obj =>
    ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'incremental-probe', namespace: 'default', creationTimestamp: '2030-01-01T00:00:00Z' },
      spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'probe', port: { number: 80 } } } }] } } as never] },
    }) as Obj;
  const all = current;
  for (const [label, next] of [['add', [...all, probe('probe-a.example.com')]], ['change', [...all, probe('probe-b.example.com')]], ['delete', all]] as const) {
    current = [...next];
    steps.push({ label: `${label} the probe Ingress`, objects: current });
  }
  const ingresses = objects.filter(isIngress);
  ingresses.forEach((ing, i) => {
    const other = ingresses[(i + 1) % ingresses.length]!;
    const otherHost = other.spec?.rules?.find((r) => r.host)?.host;
    const replace = (next: Obj, label: string): void => {
      current = current.map((o) => (o === ing || name(o) === name(ing) ? next : o));
      steps.push({ label: `${label} ${name(ing)}`, objects: current });
    };
    if (otherHost !== undefined && (ing.spec?.rules?.length ?? 0) > 0) {
      const moved = structuredClone(ing);
      moved.spec!.rules![0]!.host = otherHost;
      replace(moved, `move the first host onto ${otherHost} of`);
      replace({ ...structuredClone(moved), metadata: { ...moved.metadata, creationTimestamp: '2000-01-01T00:00:00Z' } }, 'make the oldest');
    } else replace({ ...structuredClone(ing), metadata: { ...ing.metadata, creationTimestamp: '2000-01-01T00:00:00Z' } }, 'make the oldest');
    replace(ing, 'restore');
  });
  for (const o of shuffle(objects)) {
    current = current.filter((c) => c !== o);
    steps.push({ label: `delete ${name(o)}`, objects: current });
  }
  return steps;
}

/** asServed stamps each object as an API server would: its uid, and a resourceVersion that changes with its content. */
function asServed(objects: Obj[], versions: Map<string, { text: string; version: number }>): Obj[] {
  return objects.map((o) => {
    const key = `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    const text = JSON.stringify(o);
    const prior = versions.get(key);
    const version = prior === undefined ? 1 : prior.text === text ? prior.version : prior.version + 1;
    versions.set(key, { text, version });
    return { ...o, metadata: { ...o.metadata, uid: `uid:${key}`, resourceVersion: String(version) } };
  });
}

const sources = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
let incrementalSteps = 0;

describe('incremental translation equals the full one, change by change, over the golden inputs', () => {
  for (const mode of ['as manifest files', 'as an API server serves them'] as const) {
    describe(mode, () => {
      for (const source of sources) {
        const inputs = readdirSync(join(root, source)).filter((f) => f.endsWith('.in.yaml')).sort();
        for (const input of inputs) {
          it(`${source}/${input.replace(/\.in\.yaml$/, '').replace(/-/g, ' ')}`, () => {
            const { options, rest } = splitOptions(loadObjects(join(root, source, input)));
            const incremental = new IncrementalTranslation(options);
            const versions = new Map<string, { text: string; version: number }>();
            for (const step of stepsOf(rest)) {
              const objects = mode === 'as manifest files' ? step.objects : asServed(step.objects, versions);
              const full = translateSnapshot(snapshotFromObjects(structuredClone(objects)).snapshot, options);
              const spliced = incremental.translate(snapshotFromObjects(structuredClone(objects)).snapshot);
              if (incremental.stats.mode === 'incremental') incrementalSteps++;
              expect(render(spliced), `after "${step.label}" (${incremental.stats.mode})`).to.equal(render(full));
            }
          });
        }
      }
    });
  }

  // a describe of its own: mocha runs a suite's own tests before its nested suites
  describe('afterwards', () => {
    it('took the incremental path for most Ingress changes (the comparison above is not only full against full)', () => {
      expect(incrementalSteps).to.be.greaterThan(100);
    });
  });

  it('re-translates only the Ingresses that share a host with the changed one, and every one that does', () => {
    const ingress = (name: string, host: string, created: string): Obj =>
      ({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name, namespace: 'default', creationTimestamp: created },
        spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } } as never] },
      }) as Obj;
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }] } };
    const base = [service, ingress('a', 'a.example.com', '2024-01-01T00:00:00Z'), ingress('b', 'b.example.com', '2024-01-02T00:00:00Z'), ingress('b2', 'b.example.com', '2024-01-03T00:00:00Z')];
    const incremental = new IncrementalTranslation();
    incremental.translate(snapshotFromObjects(structuredClone(base)).snapshot);
    expect(incremental.stats.mode).to.equal('full');
    const withC = [...base, ingress('c', 'c.example.com', '2024-01-04T00:00:00Z')];
    incremental.translate(snapshotFromObjects(structuredClone(withC)).snapshot);
    expect(incremental.stats).to.deep.equal({ mode: 'incremental', retranslated: 1, changed: 1 });
    // c moves onto b's host: b and b2 (which shares it) are translated again with it, a is not
    const onB = [...base, ingress('c', 'b.example.com', '2024-01-04T00:00:00Z')];
    const result = incremental.translate(snapshotFromObjects(structuredClone(onB)).snapshot);
    expect(incremental.stats).to.deep.equal({ mode: 'incremental', retranslated: 3, changed: 1 });
    expect(render(result)).to.equal(render(translateSnapshot(snapshotFromObjects(structuredClone(onB)).snapshot)));
  });
});
