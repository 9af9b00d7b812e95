// gateway-api-crds.test.ts — hack/gateway-api-crds.sh installs both channels from the Go module, and
// the apiserver enforces the ValidatingAdmissionPolicy those CRDs ship.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { clusterConfig, REPO_ROOT, runScript } from './cluster-env.js';

const run = promisify(execFile);
const CHANNEL = 'gateway.networking.k8s.io/channel';

/** gatewayApiDir is the extracted sigs.k8s.io/gateway-api module of the version versions.sh names. */
async function gatewayApiDir(): Promise<string> {
  const versions = readFileSync(path.join(REPO_ROOT, 'hack/cluster/versions.sh'), 'utf8');
  const version = /TUNA_GATEWAY_API_VERSION:-([0-9.]+)/.exec(versions)?.[1];
  const { stdout } = await run('go', ['mod', 'download', '-json', `sigs.k8s.io/gateway-api@v${version}`], { cwd: os.tmpdir() });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

describe('hack/gateway-api-crds.sh', function () {
  this.timeout(180_000);
  let crds: ApiextensionsV1Api;

  before(() => {
    crds = clusterConfig().makeApiClient(ApiextensionsV1Api);
  });

  it('installs the standard channel and the policy that refuses experimental CRDs over it', async () => {
    await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    const current = await crds.readCustomResourceDefinition({ name: 'httproutes.gateway.networking.k8s.io' });
    expect(current.metadata?.annotations?.[CHANNEL]).to.equal('standard');
    expect(current.status?.conditions?.find((c) => c.type === 'Established')?.status).to.equal('True');

    const file = path.join(await gatewayApiDir(), 'config/crd/experimental/gateway.networking.k8s.io_httproutes.yaml');
    const experimental = parse(readFileSync(file, 'utf8')) as V1CustomResourceDefinition;
    experimental.metadata = { ...experimental.metadata, resourceVersion: current.metadata?.resourceVersion };
    const error = await crds
      .replaceCustomResourceDefinition({ name: 'httproutes.gateway.networking.k8s.io', body: experimental })
      .then(() => undefined, (e: unknown) => e as Error);
    expect(error?.message).to.include('Installing experimental CRDs on top of standard channel CRDs is prohibited');
  });

  it('switches to the experimental channel when asked', async () => {
    await runScript('hack/gateway-api-crds.sh', 120_000, ['experimental']);
    const current = await crds.readCustomResourceDefinition({ name: 'httproutes.gateway.networking.k8s.io' });
    expect(current.metadata?.annotations?.[CHANNEL]).to.equal('experimental');
    const names = (await crds.listCustomResourceDefinition()).items.map((c) => c.metadata?.name);
    expect(names).to.include.members(['gateways.gateway.networking.k8s.io', 'xbackendtrafficpolicies.gateway.networking.x-k8s.io']);
  });
});
