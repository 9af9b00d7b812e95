import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
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
