// main.ts — runs the test kubelet (started by hack/cluster/up.sh; stopped by SIGTERM from down.sh).
//
// Environment: TUNA_CLUSTER_DIR (state and PKI, written by up.sh), TUNA_ECHO_BIN (echo-basic's
// directory), TUNA_NODE_NAME, TUNA_KUBELET_PORT, TUNA_K8S_VERSION; TUNA_CRANE_BIN (pulls from
// loopback registries; unset: the image table only), TUNA_KUBERNETES_SERVICE and TUNA_APISERVER
// (HOST:PORT each: the `kubernetes` Service pods reach, relayed to the apiserver; unset: none).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseServiceAddress } from './apiserver-relay.js';
import { ImagePuller } from './image-puller.js';
import { Kubelet } from './kubelet.js';

/** requireEnv reads a variable the kubelet cannot run without. */
function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (start the kubelet through hack/cluster/up.sh)`);
  return value;
}

/** loadConfig reads one of up.sh's kubeconfig files. */
function loadConfig(dir: string, name: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(path.join(dir, `${name}.kubeconfig`));
  return config;
}

const dir = requireEnv('TUNA_CLUSTER_DIR');
const log = (message: string) => console.log(`${new Date().toISOString()} kubelet: ${message}`);
const kubelet = new Kubelet({
  identity: {
    name: process.env.TUNA_NODE_NAME ?? 'tuna-node',
    kubeletPort: Number(process.env.TUNA_KUBELET_PORT ?? 10250),
    kubeletVersion: `v${process.env.TUNA_K8S_VERSION ?? '0.0.0'}`,
  },
  nodeConfig: loadConfig(dir, 'kubelet'),
  binderConfig: loadConfig(dir, 'binder'),
  images: { echoBin: requireEnv('TUNA_ECHO_BIN') },
  stateDir: dir,
  logServer: {
    host: '127.0.0.1',
    cert: readFileSync(path.join(dir, 'kubelet-serving.crt')),
    key: readFileSync(path.join(dir, 'kubelet-serving.key')),
    clientCa: readFileSync(path.join(dir, 'ca.crt')),
  },
  log,
  ...(process.env.TUNA_CRANE_BIN ? { puller: new ImagePuller(process.env.TUNA_CRANE_BIN, path.join(dir, 'images')) } : {}),
  ...(process.env.TUNA_KUBERNETES_SERVICE && process.env.TUNA_APISERVER
    ? {
        apiserverRelay: {
          service: parseServiceAddress(process.env.TUNA_KUBERNETES_SERVICE, 'TUNA_KUBERNETES_SERVICE'),
          apiserver: parseServiceAddress(process.env.TUNA_APISERVER, 'TUNA_APISERVER'),
        },
      }
    : {}),
});

let isStopping = false;
const stop = (signal: string) => {
  if (isStopping) return;
  isStopping = true;
  log(`${signal}: stopping pods and cleaning up`);
  kubelet.shutdown().then(
    () => process.exit(0),
    (error: unknown) => {
      log(`cleanup failed: ${(error as Error).message}`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

kubelet.start().then(
  () => log('node registered; watching pods'),
  (error: unknown) => {
    log(`start failed: ${(error as Error).message}`);
    stop('start failure');
  },
);
