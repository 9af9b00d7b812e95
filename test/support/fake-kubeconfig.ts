import { KubeConfig } from '@kubernetes/client-node';

/** fakeKubeConfig points a KubeConfig at a fake apiserver on loopback (`http://127.0.0.1:<port>`), no credentials. */
export function fakeKubeConfig(server: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return config;
}
