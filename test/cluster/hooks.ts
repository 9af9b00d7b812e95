// hooks.ts — mocha root hooks for the cluster tier: start the test cluster (building it the first
// time) and export KUBECONFIG; stop it afterwards if this run started it.
import type { Context } from 'mocha';
import { runScript } from './cluster-env.js';

// A cold start builds Kubernetes from source: on 2 cores that takes tens of minutes.
export const UP_TIMEOUT_MS = 60 * 60_000;
let didStart = false;

/**
 * clusterUp runs hack/cluster/up.sh (idempotent), exports KUBECONFIG and TUNA_REGISTRY for the
 * cluster helpers, and says whether it started the cluster (then its caller stops it).
 */
export async function clusterUp(): Promise<boolean> {
  const out = await runScript('hack/cluster/up.sh', UP_TIMEOUT_MS);
  const kubeconfig = /KUBECONFIG=(\S+)/.exec(out)?.[1];
  if (!kubeconfig) throw new Error(`hack/cluster/up.sh printed no KUBECONFIG: ${out}`);
  process.env.KUBECONFIG = kubeconfig;
  process.env.TUNA_REGISTRY = /TUNA_REGISTRY=(\S+)/.exec(out)?.[1] ?? '';
  return /TUNA_CLUSTER_STARTED=1/.test(out);
}

/** mochaHooks are mocha's root hook plugin (loaded through .mocharc.json `require`). */
export const mochaHooks = {
  async beforeAll(this: Context): Promise<void> {
    this.timeout(UP_TIMEOUT_MS);
    didStart = await clusterUp();
  },
  async afterAll(this: Context): Promise<void> {
    this.timeout(120_000);
    if (didStart) await runScript('hack/cluster/down.sh', 120_000);
  },
};
