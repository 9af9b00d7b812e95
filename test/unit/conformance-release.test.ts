/**
 * hack/conformance/release.sh names tuna's advertised features as each release of the suite spells
 * them, and hack/conformance/cross-check.sh fails a run whose report disagrees with the suite's own
 * go test output (suite v1.6.0/v1.6.1 write the report before the parallel tests have run). The
 * go test lines below are in the format `go test -v` prints for TestConformance's subtests.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { DEDICATED_CLASS_FEATURES } from '../../src/translate/gateway/features.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function bash(script: string, args: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', script, 'bash', ...args], { cwd: REPO, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const featureNames = (version: string, list: string) =>
  bash('source hack/conformance/release.sh && suite_feature_names "$1" "$2"', [version, list]).stdout.trim();

describe('hack/conformance/release.sh', () => {
  it('knows the v1.6 releases and no other', () => {
    for (const v of ['1.6.0', '1.6.1', '1.6.2', '1.6.3']) expect(bash('source hack/conformance/release.sh && suite_release_known "$1"', [v]).status, v).to.equal(0);
    for (const v of ['1.5.1', '1.6', '1.6.4', '']) expect(bash('source hack/conformance/release.sh && suite_release_known "$1"', [v]).status, v).to.equal(1);
  });

  it('names GatewayInfrastructure GatewayInfrastructurePropagation for the releases before v1.6.3', () => {
    const list = 'GatewayAddressEmpty,GatewayInfrastructure,GatewayPort8080';
    for (const v of ['1.6.0', '1.6.1', '1.6.2']) expect(featureNames(v, list), v).to.equal('GatewayAddressEmpty,GatewayInfrastructurePropagation,GatewayPort8080');
    expect(featureNames('1.6.3', list)).to.equal(list);
  });

  it('keeps every other feature of a Dedicated class as it is, in its order', () => {
    const list = DEDICATED_CLASS_FEATURES.join(',');
    expect(featureNames('1.6.1', list).split(',')).to.deep.equal(DEDICATED_CLASS_FEATURES.map((f) => (f === 'GatewayInfrastructure' ? 'GatewayInfrastructurePropagation' : f)));
    expect(featureNames('1.6.1', 'GatewayInfrastructureMetadata,XGatewayInfrastructure')).to.equal('GatewayInfrastructureMetadata,XGatewayInfrastructure');
  });
});

interface Part {
  failedTests?: string[];
  skippedTests?: string[];
}

describe('hack/conformance/cross-check.sh', function () {
  this.timeout(30_000);
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'conformance-cross-check-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function check(log: string, core: Part = {}, extended: Part = {}) {
    writeFileSync(path.join(dir, 'suite.log'), log);
    const report = { profiles: [{ name: 'GATEWAY-HTTP', core: { result: 'success', ...core }, extended: { result: 'success', ...extended } }] };
    writeFileSync(path.join(dir, 'report.yaml'), stringify(report));
    return bash('hack/conformance/cross-check.sh "$1" "$2"', [path.join(dir, 'suite.log'), path.join(dir, 'report.yaml')]);
  }

  /**
   * run is a go test -v log of TestConformance: serial D, parallel A, B (skipped as unsupported
   * before it ran) and C, whose result line is `c` (none: the binary stopped with `c` as its last line).
   */
  const run = (c: 'PASS' | 'FAIL' | 'SKIP' | 'none', cLines: string[] = []) =>
    [
      '=== RUN   TestConformance',
      '=== RUN   TestConformance/A',
      '=== PAUSE TestConformance/A',
      '=== RUN   TestConformance/B',
      '=== PAUSE TestConformance/B',
      '=== RUN   TestConformance/C',
      '=== PAUSE TestConformance/C',
      '=== RUN   TestConformance/D',
      '=== CONT  TestConformance/B',
      '    conformance.go:56: Skipping B: suite does not support HTTPRouteCORS',
      '=== CONT  TestConformance/C',
      ...cLines,
      ...(c === 'none'
        ? ['panic: test timed out after 50m0s']
        : [
            `--- ${c === 'FAIL' ? 'FAIL' : 'PASS'}: TestConformance (1.00s)`,
            '    --- PASS: TestConformance/D (0.50s)',
            '    --- SKIP: TestConformance/B (0.00s)',
            '    --- PASS: TestConformance/A (0.20s)',
            '        --- PASS: TestConformance/A/sub (0.10s)',
            `    --- ${c}: TestConformance/C (0.30s)`,
            c === 'FAIL' ? 'FAIL' : 'PASS',
          ]),
    ].join('\n');

  it('agrees when every test the suite ran passed and the unsupported one was skipped first', () => {
    const r = check(run('PASS'));
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stderr).to.include('go test passed 3, failed 0, skipped 1');
  });

  it('fails when a parallel test failed after the report counted it passed', () => {
    const r = check(run('FAIL', ['    httproute-cors.go:80: expected 200, got 404']));
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('C FAILed in go test; the report does not count it failed');
  });

  it('agrees when the report counts that failure (as v1.6.3 does)', () => {
    const r = check(run('FAIL'), {}, { failedTests: ['C'] });
    expect(r.status, r.stderr).to.equal(0);
  });

  it('fails when a parallel test skipped itself while running and the report counted it passed', () => {
    const r = check(run('SKIP', ['    gateway-static-addresses.go:60: no usable address given, skipping']));
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('C skipped itself while running; the report does not count it skipped');
    expect(check(run('SKIP'), { skippedTests: ['C'] }).status).to.equal(0);
  });

  it('fails when a test that started has no result (the suite stopped half-way)', () => {
    const r = check(run('none'));
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('C started but has no result line');
  });

  it('fails when a test passed that the report counts as failed', () => {
    const r = check(run('PASS'), { failedTests: ['A'] });
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('A PASSed in go test; the report counts it failed or skipped');
  });

  it('fails on a log with no suite results at all', () => {
    const r = check('FAIL\tsetup error\n');
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('no results of TestConformance subtests in the log');
  });
});
