/**
 * Golden tests for the translators: each `test/golden/<source>/<scenario>.in.yaml` (a multi-document
 * manifest) is translated and compared with `<scenario>.out.yaml` (the graph and the statuses).
 * `UPDATE_GOLDEN=1` rewrites the outputs and removes orphaned ones (`GOLDEN_DIR=<source>` limits both). Every scenario is also translated
 * with its documents in reverse and in a shuffled order and must give byte-identical output, and its
 * graph must pass validate().
 *
 * A Secret that must hold a usable certificate writes `$TEST_TLS_CRT` and `$TEST_TLS_KEY` as its
 * `data`: they become (base64) a self-signed certificate and its key made once per run with
 * openssl, so no key is committed; the outputs never show Secret data.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { validate } from '../../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';
import type { TranslateOptions } from '../../src/translate/index.js';
import { loadObjects, shuffle } from './inputs.js';


const root = dirname(fileURLToPath(import.meta.url));
const update = process.env.UPDATE_GOLDEN === '1';

/** renderGolden translates manifest objects and renders the golden output text. */
export function renderGolden(objects: unknown[]): string {
  const options: Partial<TranslateOptions> = {};
  const rest: unknown[] = [];
  for (const o of objects) {
    const doc = o as { apiVersion?: string; kind?: string; spec?: Partial<TranslateOptions> };
    if (doc.apiVersion === 'test.tuna.dev/v1' && doc.kind === 'TranslateOptions') Object.assign(options, doc.spec);
    else rest.push(o);
  }
  const { snapshot } = snapshotFromObjects(rest);
  const result = translateSnapshot(snapshot, options);
  const problems = validate(result.graph);
  if (problems.length > 0) throw new Error(`translator produced an invalid graph:\n${problems.join('\n')}`);
  return stringify(result, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });
}

// GOLDEN_DIR=ingress limits a run (and UPDATE_GOLDEN) to one source folder.
const only = process.env.GOLDEN_DIR;
const sources = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory() && (only === undefined || d.name === only))
  .map((d) => d.name)
  .sort();

describe('golden translation', () => {
  for (const source of sources) {
    const dir = join(root, source);
    const inputs = readdirSync(dir).filter((f) => f.endsWith('.in.yaml')).sort();
    if (update) {
      const wanted = new Set(inputs.map((f) => f.replace(/\.in\.yaml$/, '.out.yaml')));
      for (const f of readdirSync(dir)) if (f.endsWith('.out.yaml') && !wanted.has(f)) unlinkSync(join(dir, f));
    }
    describe(source, () => {
      for (const input of inputs) {
        const scenario = input.replace(/\.in\.yaml$/, '');
        it(scenario.replace(/-/g, ' '), () => {
          const objects = loadObjects(join(dir, input));
          const actual = renderGolden(objects);
          const outFile = join(dir, `${scenario}.out.yaml`);
          if (update) writeFileSync(outFile, actual);
          expect(existsSync(outFile), `${outFile} missing: run with UPDATE_GOLDEN=1`).to.equal(true);
          expect(actual).to.equal(readFileSync(outFile, 'utf8'));
          expect(renderGolden([...objects].reverse()), 'reversed input order').to.equal(actual);
          expect(renderGolden(shuffle(objects)), 'shuffled input order').to.equal(actual);
        });
      }
    });
  }
});
