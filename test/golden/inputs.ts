/**
 * The golden inputs, shared by the golden tests: each `test/golden/<source>/<scenario>.in.yaml`
 * read as plain objects, with the test certificate pair in place of its placeholders.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

let testPair: { cert: string; key: string } | undefined;

/** withTestPair replaces the `$TEST_TLS_CRT` and `$TEST_TLS_KEY` placeholders by a pair made for this run (base64). */
function withTestPair(text: string): string {
  if (!text.includes('$TEST_TLS_')) return text;
  testPair ??= selfSignedCertificate(['golden.test']);
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  return text.replaceAll('$TEST_TLS_CRT', b64(testPair.cert)).replaceAll('$TEST_TLS_KEY', b64(testPair.key));
}

/** loadObjects reads a golden input file as plain objects. */
export function loadObjects(file: string): unknown[] {
  const docs = parseAllDocuments(withTestPair(readFileSync(file, 'utf8')));
  for (const d of docs) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]?.message}`);
  return docs.map((d) => d.toJS() as unknown).filter((o) => o !== null && o !== undefined);
}

/** shuffle is a fixed permutation (deterministic, no randomness in tests). */
export function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  let seed = 7;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
