// tuna-image.ts — the tuna operator image, built by hack/image.sh and pushed to the test cluster's
// registry (TUNA_REGISTRY, exported by the root hook from hack/cluster/up.sh), for tests whose pods run it.
import { runScript } from './cluster-env.js';

/** PushedImage is an image in the cluster's registry and what hack/image.sh said of it. */
export interface PushedImage {
  /** repository is REGISTRY/tuna/operator or REGISTRY/tuna/edge (a chart's image.repository) */
  readonly repository: string;
  readonly tag: string;
  /** reference is repository:tag */
  readonly reference: string;
  /** summary is hack/image.sh's line: reference, digest, compressed size */
  readonly summary: string;
}

/** pushTunaImage builds the operator (or edge) image from this checkout and pushes it as `tag`. */
export async function pushTunaImage(tag: string, component: 'operator' | 'edge' = 'operator'): Promise<PushedImage> {
  const registry = process.env.TUNA_REGISTRY;
  if (!registry) throw new Error('TUNA_REGISTRY is not set: hack/cluster/up.sh starts the registry and the root hook exports it');
  const repository = `${registry}/tuna/${component}`;
  const reference = `${repository}:${tag}`;
  const summary = (await runScript('hack/image.sh', 900_000, [component, '--push', reference])).trim();
  return { repository, tag, reference, summary };
}
