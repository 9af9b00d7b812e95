// quickstart-doc.test.ts — docs/quickstart.md as a reader follows it, top to bottom in one shell:
// the one-machine walk, then the same edge and `tuna operator` against the test cluster.
import { expect } from 'chai';
import { CoreV1Api } from '@kubernetes/client-node';
import { freePort, outputPattern, readDocSection, runScript, userEnv } from '../support/doc-commands.js';
import { REPO_ROOT, clusterConfig } from './cluster-env.js';

const doc = `${REPO_ROOT}/docs/quickstart.md`;

describe('docs/quickstart.md on the test cluster', function () {
  this.timeout(600_000);

  after(async () => {
    // The walk deletes its namespace itself; this is for a walk that failed halfway.
    await clusterConfig().makeApiClient(CoreV1Api).deleteNamespace({ name: 'quickstart' }).catch(() => undefined);
  });

  it('runs both parts verbatim: an Ingress of the cluster answers through the edge and gets its address', async () => {
    const local = readDocSection(doc, 'One machine');
    const cluster = readDocSection(doc, 'A cluster');
    expect(cluster.script).to.contain('tuna operator');
    const ports = { TUNNEL_PORT: String(await freePort()), HTTP_PORT: String(await freePort()), APP_PORT: String(await freePort()) };
    const ran = await runScript(`${local.script}\n${cluster.script}`, REPO_ROOT, userEnv({ ...ports, KUBECONFIG: process.env.KUBECONFIG! }), 540_000);
    expect(ran.code, `stdout:\n${ran.stdout}\nstderr:\n${ran.stderr}`).to.equal(0);
    for (const block of [...local.outputs, ...cluster.outputs]) expect(ran.stdout, ran.stderr).to.match(outputPattern(block));
    expect(ran.stdout).to.contain('tuna operator: watching the cluster');
  });
});
