import { expect } from 'chai';
import { EDGE_CHART, ensureHelm, helmFails, parseManifests, runHelm, setFlags } from '../support/helm.js';
import type { KubeObject } from '../support/helm.js';

const REQUIRED = { baseDomain: 'tuna.example.com', 'tls.tunnel.secretName': 'edge-tunnel-tls' };

/** charts/tuna-edge's accessLog values (helm template, hack/helm.sh): the flags of tuna edge --access-log, only when enabled. */
describe('charts/tuna-edge: the access log values', function () {
  this.timeout(600_000);
  let helm: string;
  const args = async (set: Record<string, string | number | boolean>): Promise<string[]> => {
    const objects = parseManifests(await runHelm(helm, ['template', 'edge', EDGE_CHART, ...setFlags({ ...REQUIRED, ...set })]));
    const deployment = objects.find((o) => o.kind === 'Deployment') as KubeObject & { spec: { template: { spec: { containers: { args: string[] }[] } } } };
    return deployment.spec.template.spec.containers[0]!.args;
  };

  before(async () => {
    helm = await ensureHelm();
  });

  it('passes --access-log - with the format (quoted whole) and sample only with accessLog.enabled, and refuses a bad sample', async () => {
    expect(await args({})).to.deep.equal(['edge', '--config=/etc/tuna/config/edge.yaml', '--log-format=json']);
    expect(await args({ 'accessLog.enabled': true, 'accessLog.format': "$client '$protocol' $host$path #$status", 'accessLog.sample': 0.25 })).to.deep.equal([
      'edge',
      '--config=/etc/tuna/config/edge.yaml',
      '--log-format=json',
      '--access-log=-',
      "--access-log-format=$client '$protocol' $host$path #$status",
      '--access-log-sample=0.25',
    ]);
    expect(await helmFails(helm, ['template', 'edge', EDGE_CHART, ...setFlags({ ...REQUIRED, 'accessLog.sample': 0 })])).to.include("at '/accessLog/sample'");
  });
});
