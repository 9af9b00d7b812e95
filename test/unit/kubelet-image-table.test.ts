// kubelet-image-table.test.ts — which program the test kubelet runs for an image, and the stand-in label.
import { expect } from 'chai';
import { resolveArgv } from '../support/kubelet/container-process.js';
import { imageRepository, resolveImage } from '../support/kubelet/image-table.js';

describe('test kubelet: image table', () => {
  const options = { echoBin: '/opt/echo' };

  it('maps every echo-basic tag of the conformance manifests to the echo-basic we built', () => {
    for (const tag of ['v1.5.1', 'v1.6.0-dev.2', 'v1.6.0-dev.3']) {
      expect(resolveImage(`registry.k8s.io/gateway-api/echo-basic:${tag}`, options)).to.deep.equal({ kind: 'binary', path: '/opt/echo/echo-basic', name: 'echo-basic' });
    }
    expect(imageRepository('registry.k8s.io/coredns/coredns:v1.12.2@sha256:00')).to.equal('registry.k8s.io/coredns/coredns');
  });

  it('runs coredns as our DNS stand-in under this Node, labelled as a stand-in, with the container args after the script', () => {
    const program = resolveImage('registry.k8s.io/coredns/coredns:v1.12.2', options);
    expect(program).to.include({ kind: 'binary', name: 'coredns', path: process.execPath });
    expect(program?.kind === 'binary' ? program.standIn : undefined).to.match(/stand-in.*not coredns/);
    const argv = resolveArgv({ name: 'coredns', args: ['-conf', '/root/Corefile'] }, program!, new Map());
    expect(argv[0]).to.equal(process.execPath);
    expect(argv[1]).to.equal('--import');
    expect(argv[3]).to.match(/dns-stand-in\.ts$/);
    expect(argv.slice(4)).to.deep.equal(['-conf', '/root/Corefile']);
  });

  it('knows no other image (the pod then waits with ErrImagePull)', () => {
    expect(resolveImage('docker.io/library/nginx:1.27', options)).to.equal(undefined);
  });
});
