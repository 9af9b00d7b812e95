/**
 * translateCrds beyond the golden files: the fragment and claim contract merge relies on, informer
 * objects with Date timestamps, and the hostname rules.
 */
import { expect } from 'chai';
import { indexSnapshot } from '../../src/translate/common/index-snapshot.js';
import { translateCrds } from '../../src/translate/crd/index.js';
import { checkCustomDomain, checkSubdomain, tunnelHostname, isIpLiteral } from '../../src/translate/crd/hostname.js';
import { defaultTranslateOptions, emptySnapshot } from '../../src/translate/types.js';
import type { Snapshot } from '../../src/translate/types.js';

function snapshotWith(objects: Partial<Snapshot>): Snapshot {
  return { ...emptySnapshot(), ...objects };
}

const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } };

function tunnel(name: string, created: unknown, spec: Record<string, unknown> = {}): never {
  return {
    apiVersion: 'tuna.dev/v1alpha1',
    kind: 'Tunnel',
    metadata: { name, namespace: 'shop', creationTimestamp: created },
    spec: { protocol: 'http', service: { name: 'web', port: 'http' }, ...spec },
  } as never;
}

describe('translateCrds', () => {
  it('gives each Tunnel its own fragment group with one HostClaim dated by the Tunnel', () => {
    const snap = snapshotWith({ services: [service as never], tunnels: [tunnel('a', new Date('2026-01-02T03:04:05.000Z'))] });
    const out = translateCrds(indexSnapshot(snap), defaultTranslateOptions);
    expect(out.fragments.map((f) => f.group)).to.deep.equal(['tunnel/shop/a']);
    expect(out.fragments[0]!.claims).to.deep.equal([
      {
        hostname: 'a-shop.tuna.example',
        bindingId: 'binding/host/a-shop.tuna.example',
        owner: { group: 'tuna.dev', kind: 'Tunnel', namespace: 'shop', name: 'a' },
        created: '2026-01-02T03:04:05Z',
      },
    ]);
  });

  it('claims no hostname for a tcp Tunnel', () => {
    const snap = snapshotWith({ services: [service as never], tunnels: [tunnel('db', '2026-01-01T00:00:00Z', { protocol: 'tcp' })] });
    const out = translateCrds(indexSnapshot(snap), defaultTranslateOptions);
    expect(out.fragments).to.have.length(1);
    expect(out.fragments[0]!.claims).to.deep.equal([]);
    expect(out.fragments[0]!.graph.bindings.map((b) => b.id)).to.deep.equal(['binding/tcp-port/tunnel/shop/db/0']);
  });

  it('puts every reservation in one claim-free fragment', () => {
    const domain = { apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: { name: 'd', namespace: 'shop' }, spec: { subdomain: 'd' } };
    const port = { apiVersion: 'tuna.dev/v1alpha1', kind: 'TCPPort', metadata: { name: 'p', namespace: 'shop' }, spec: {} };
    const out = translateCrds(indexSnapshot(snapshotWith({ domains: [domain as never], tcpPorts: [port as never] })), defaultTranslateOptions);
    expect(out.fragments).to.have.length(1);
    expect(out.fragments[0]!.claims).to.deep.equal([]);
    expect(out.fragments[0]!.graph.reservations.map((r) => r.id)).to.deep.equal(['reservation/domain/d.tuna.example', 'reservation/tcp-port/shop/p']);
  });

  it('skips an object without a name: there is nothing to write its status to', () => {
    const nameless = { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: { namespace: 'shop' }, spec: {} };
    const out = translateCrds(indexSnapshot(snapshotWith({ tunnels: [nameless as never] })), defaultTranslateOptions);
    expect(out).to.deep.equal({ fragments: [], statuses: [] });
  });

  it('never throws on garbage in a list, and reports it as InvalidSpec', () => {
    const garbage = { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: { name: 'g', namespace: 'shop' }, spec: 42 };
    const out = translateCrds(indexSnapshot(snapshotWith({ tunnels: [garbage as never, null as never, 'x' as never] })), defaultTranslateOptions);
    expect(out.fragments).to.deep.equal([]);
    expect(out.statuses.map((s) => s.conditions[0]?.reason)).to.deep.equal(['InvalidSpec']);
  });
});

describe('tuna.dev hostname rules', () => {
  for (const ip of ['192.0.2.1', '::1', '[2001:db8::1]', '2001:db8::1']) {
    it(`treats ${ip} as an IP literal`, () => {
      expect(isIpLiteral(ip)).to.equal(true);
      expect(checkCustomDomain(ip, 'tuna.example')).to.deep.include({ reason: 'HostnameIsIPAddress' });
    });
  }

  for (const name of ['shop.example.com', '1.example.com', 'a.b.c.example']) {
    it(`accepts the custom domain ${name}`, () => {
      expect(isIpLiteral(name)).to.equal(false);
      expect(checkCustomDomain(name, 'tuna.example')).to.deep.equal({ hostname: name });
    });
  }

  it('refuses a custom domain equal to, or inside, the base domain', () => {
    expect(checkCustomDomain('tuna.example', 'tuna.example')).to.deep.include({ reason: 'CustomDomainInBaseDomain' });
    expect(checkCustomDomain('a.tuna.example', 'tuna.example')).to.deep.include({ reason: 'CustomDomainInBaseDomain' });
    expect(checkCustomDomain('atuna.example', 'tuna.example')).to.deep.equal({ hostname: 'atuna.example' });
  });

  it('takes a subdomain of exactly one label', () => {
    expect(checkSubdomain('shop', 'tuna.example')).to.deep.equal({ hostname: 'shop.tuna.example' });
    expect(checkSubdomain('eu.shop', 'tuna.example')).to.deep.include({ reason: 'InvalidHostname' });
    expect(checkSubdomain('-shop', 'tuna.example')).to.deep.include({ reason: 'InvalidHostname' });
    expect(checkSubdomain('a'.repeat(64), 'tuna.example')).to.deep.include({ reason: 'InvalidHostname' });
  });

  it('generates <name>-<namespace>.<baseDomain> only when that is one label', () => {
    expect(tunnelHostname('web', 'shop', 'edge.test')).to.deep.equal({ hostname: 'web-shop.edge.test' });
    expect(tunnelHostname('a.b', 'shop', 'edge.test')).to.deep.include({ reason: 'InvalidHostname' });
    expect(tunnelHostname('a'.repeat(40), 'b'.repeat(23), 'edge.test')).to.deep.include({ reason: 'InvalidHostname' });
    expect(tunnelHostname('a'.repeat(40), 'b'.repeat(22), 'edge.test')).to.deep.equal({ hostname: `${'a'.repeat(40)}-${'b'.repeat(22)}.edge.test` });
  });
});
