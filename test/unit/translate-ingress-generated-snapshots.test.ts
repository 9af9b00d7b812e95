/**
 * Generated snapshots for the Ingress and LoadBalancer Service translators: many small, often
 * malformed combinations (a fixed-seed generator, so every run is the same) must never give an
 * invalid graph, and must give the same result whatever the object order.
 */
import { expect } from 'chai';
import { stableStringify, validate } from '../../src/model/index.js';
import { emptySnapshot, translateSnapshot } from '../../src/translate/index.js';
import type { Snapshot } from '../../src/translate/index.js';

/** A small linear congruential generator: deterministic pseudo-random picks. */
function generator(seed: number): <T>(items: readonly T[]) => T {
  let state = seed;
  return <T>(items: readonly T[]): T => {
    state = (state * 1103515245 + 12345) % 2147483648;
    // The low bits of an LCG repeat with short periods; use the high ones.
    return items[(state >>> 16) % items.length] as T;
  };
}

const hosts = ['a.example.com', 'a.example.com', 'b.example.com', undefined, 'A.example.com', '*.example.com', '10.0.0.1', '[::1]', 'bad_host', 'web-default.tuna.example'];
const paths = ['/', '/a', '/a/', '/a/b', '/ab', '/', '/a', undefined, '', 'rel', '/q?x'];
const pathTypes = ['Prefix', 'Prefix', 'Exact', 'ImplementationSpecific', undefined, 'Regex'];
const namespaces = ['default', 'other'];
const names = ['web', 'api', 'web2'];
const ports = [80, 80, 8080, 0, 70000];
const created = [undefined, '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'];

function generate(seed: number): Snapshot {
  const pick = generator(seed);
  const s = emptySnapshot();
  // Services and Secrets are unique by namespace/name, as in a cluster: the snapshot index keeps one
  // object per key, so duplicates would test the index, not the translators.
  const seen = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const svcPorts = [{ name: 'http', port: pick(ports), protocol: pick(['TCP', 'TCP', undefined, 'UDP']), appProtocol: pick([undefined, 'http', 'kubernetes.io/ws']) }, { name: pick(['http', 'b']), port: pick(ports) }];
    const name = pick(names);
    const namespace = pick(namespaces);
    if (seen.has(`svc ${namespace}/${name}`)) continue;
    seen.add(`svc ${namespace}/${name}`);
    s.services.push({
      metadata: { name, namespace, creationTimestamp: pick(created) as never },
      spec: { type: pick(['ClusterIP', 'ClusterIP', 'LoadBalancer', 'ExternalName']), loadBalancerClass: pick(['tuna', undefined]), ports: svcPorts.slice(0, pick([1, 1, 2, 0])) },
    });
  }
  for (let i = 0; i < 4; i++) {
    const name = pick(['tls', 'other']);
    const namespace = pick(namespaces);
    if (seen.has(`secret ${namespace}/${name}`)) continue;
    seen.add(`secret ${namespace}/${name}`);
    s.secrets.push({ metadata: { name, namespace }, type: pick(['kubernetes.io/tls', 'Opaque']) });
  }
  for (let i = 0; i < 5; i++) {
    const rules = [0, 1, 2].slice(0, pick([0, 1, 2, 3])).map(() => ({
      host: pick(hosts),
      http: { paths: [0, 1].map(() => ({ path: pick(paths), pathType: pick(pathTypes) as string, backend: { service: { name: pick(names), port: pick([{ number: 80 }, { name: 'http' }, { number: 8080 }]) } } })) },
    }));
    s.ingresses.push({
      metadata: { name: pick(names), namespace: pick(namespaces), creationTimestamp: pick(created) as never },
      spec: {
        ingressClassName: pick(['tuna', 'tuna', 'nginx']),
        rules,
        ...(pick([true, false]) ? { defaultBackend: { service: { name: pick(names), port: { number: 80 } } } } : {}),
        ...(pick([true, false]) ? { tls: [{ hosts: [pick(hosts) ?? 'a.example.com'], secretName: pick(['tls', 'other', '']) }] } : {}),
      },
    });
  }
  return s;
}

function reversed(s: Snapshot): Snapshot {
  return { ...s, services: [...s.services].reverse(), secrets: [...s.secrets].reverse(), ingresses: [...s.ingresses].reverse() };
}

describe('Ingress and Service translation of generated snapshots', () => {
  it('never produces an invalid graph and is independent of object order, over 300 generated snapshots', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const snapshot = generate(seed);
      const result = translateSnapshot(snapshot);
      expect(validate(result.graph), `seed ${seed}`).to.deep.equal([]);
      expect(stableStringify(translateSnapshot(reversed(snapshot))), `seed ${seed} reversed`).to.equal(stableStringify(result));
    }
  });
});
