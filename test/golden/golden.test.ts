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
import { parseAllDocuments, stringify } from 'yaml';
import { validate } from '../../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';
import type { TranslateOptions } from '../../src/translate/index.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

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

let testPair: { cert: string; key: string } | undefined;

/** withTestPair replaces the `$TEST_TLS_CRT` and `$TEST_TLS_KEY` placeholders by a pair made for this run (base64). */
function withTestPair(text: string): string {
  if (!text.includes('$TEST_TLS_')) return text;
  testPair ??= selfSignedCertificate(['golden.test']);
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  return text.replaceAll('$TEST_TLS_CRT', b64(testPair.cert)).replaceAll('$TEST_TLS_KEY', b64(testPair.key));
}

function loadObjects(file: string): unknown[] {
  const docs = parseAllDocuments(withTestPair(readFileSync(file, 'utf8')));
  for (const d of docs) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
  return docs.map((d) => d.toJS() as unknown).filter((o) => o !== null && o !== undefined);
}

/** A fixed permutation (deterministic, no randomness in tests). */
function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  let seed = 7;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
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
