// cluster-down.spec.ts — runs last in the cluster tier: `cluster:down` must leave nothing behind.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runScript } from '../cluster-env.js';
import { findLeftovers, findProcesses } from '../leftovers.js';

describe('cluster:down', function () {
  this.timeout(120_000);

  it('leaves no process, network namespace, veth, bridge or mount of the cluster behind', async () => {
    const kubeconfig = process.env.KUBECONFIG ?? '';
    const stateDir = path.dirname(kubeconfig);
    // The control plane's command lines name files in the state directory; the kubelet's names its
    // main module; pods run the echo-basic we built. The separator keeps `flock /tmp/tuna-cluster.lock`
    // (how the tier is run on a shared machine) from counting as a leftover of `/tmp/tuna-cluster`.
    const markers = [`${stateDir}${path.sep}`, path.join(REPO_ROOT, 'test/support/kubelet/main.ts'), `${path.sep}echo-basic-v`];
    // Precondition, so the test can fail: the cluster and its kubelet are running now.
    expect(findProcesses(markers), 'cluster processes before down').to.not.be.empty;

    await runScript('hack/cluster/down.sh', 120_000);

    expect(await findLeftovers(markers)).to.deep.equal({ processes: [], netns: [], links: [], mounts: [] });
    expect(existsSync(stateDir), 'state directory').to.equal(false);
    // The mount point pod-features.test.ts asked for did not exist on the host: the kubelet made it
    // and must have removed it.
    expect(existsSync('/etc/tuna-test'), 'mount point created for a pod').to.equal(false);
  });
});
