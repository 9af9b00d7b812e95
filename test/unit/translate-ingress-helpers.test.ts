/** Unit tests for the Ingress translator's pure helpers: host and path normalisation, class matching. */
import type { V1Ingress, V1IngressClass } from '@kubernetes/client-node';
import { expect } from 'chai';
import { checkHost, generatedHostname } from '../../src/translate/common/hostname.js';
import { ingressClassMatcher } from '../../src/translate/ingress/ingress-class.js';
import { toPathMatch } from '../../src/translate/ingress/path.js';
import { defaultTranslateOptions } from '../../src/translate/types.js';

describe('checkHost', () => {
  const accepted: [string, string][] = [
    ['app.example.com', 'app.example.com'],
    ['App.Example.COM', 'app.example.com'],
    ['*.example.com', '*.example.com'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
  ];
  for (const [raw, host] of accepted)
    it(`accepts ${raw} as ${host}`, () => {
      expect(checkHost(raw)).to.deep.equal({ ok: true, host });
    });

  const ipLiterals = ['10.0.0.1', '[::1]', '::1', '2001:db8::1'];
  for (const raw of ipLiterals)
    it(`refuses the IP literal ${raw} as an IP address`, () => {
      const c = checkHost(raw);
      expect(c.ok).to.equal(false);
      if (!c.ok) expect(c.message).to.contain('is an IP address');
    });

  const invalid = ['*', 'a.*.example.com', '*.*.example.com', 'under_score.example.com', 'a..b', '-a.example.com', 'example.com.', ''];
  for (const raw of invalid)
    it(`refuses "${raw}" as not a DNS name`, () => {
      const c = checkHost(raw);
      expect(c.ok).to.equal(false);
      if (!c.ok) expect(c.message).to.contain('not a valid DNS name');
    });
});

describe('generatedHostname', () => {
  it('joins name and namespace into one label under the base domain', () => {
    expect(generatedHostname('Web', 'shop', 'Tuna.Example')).to.deep.equal({ ok: true, host: 'web-shop.tuna.example' });
  });

  it('puts a port prefix before the name', () => {
    expect(generatedHostname('web', 'shop', 'tuna.example', 'admin')).to.deep.equal({ ok: true, host: 'admin-web-shop.tuna.example' });
  });

  it('refuses a label longer than 63 characters', () => {
    expect(generatedHostname('a'.repeat(40), 'b'.repeat(23), 'tuna.example').ok).to.equal(false);
    expect(generatedHostname('a'.repeat(40), 'b'.repeat(22), 'tuna.example').ok).to.equal(true);
  });

  it('refuses a dotted Ingress name, which would not be one label', () => {
    expect(generatedHostname('web.v2', 'shop', 'tuna.example').ok).to.equal(false);
  });
});

describe('toPathMatch', () => {
  const cases: [string | undefined, string | undefined, string, string][] = [
    ['Exact', '/foo', 'Exact', '/foo'],
    ['Exact', '/foo/', 'Exact', '/foo/'],
    ['Prefix', '/foo', 'Prefix', '/foo'],
    ['Prefix', '/foo/', 'Prefix', '/foo'],
    ['Prefix', '/foo//', 'Prefix', '/foo'],
    ['Prefix', '/', 'Prefix', '/'],
    ['ImplementationSpecific', '/static/', 'Prefix', '/static'],
    ['ImplementationSpecific', undefined, 'Prefix', '/'],
    [undefined, '/legacy', 'Prefix', '/legacy'],
  ];
  for (const [pathType, path, type, value] of cases)
    it(`serves ${String(pathType)} ${String(path)} as ${type} ${value}`, () => {
      expect(toPathMatch(pathType, path)).to.deep.equal({ ok: true, match: { type, value } });
    });

  const refused: [string | undefined, string | undefined][] = [
    ['Exact', 'relative'],
    ['Exact', undefined],
    ['Prefix', ''],
    ['Prefix', '/a b'],
    ['Prefix', '/a?b=1'],
    ['Prefix', '/a#frag'],
    ['Prefix', '/a\u0000'],
    ['Regex', '/a.*'],
  ];
  for (const [pathType, path] of refused)
    it(`refuses ${String(pathType)} ${JSON.stringify(path)}`, () => {
      expect(toPathMatch(pathType, path).ok).to.equal(false);
    });
});

describe('ingressClassMatcher', () => {
  const ingress = (className?: string, annotation?: string): V1Ingress => ({
    metadata: { name: 'x', namespace: 'default', ...(annotation !== undefined ? { annotations: { 'kubernetes.io/ingress.class': annotation } } : {}) },
    spec: className !== undefined ? { ingressClassName: className } : {},
  });
  const ingressClass = (name: string, controller: string, isDefault = false): V1IngressClass => ({
    metadata: { name, ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}) },
    spec: { controller },
  });
  const tuna = defaultTranslateOptions.ingressControllerName;

  const table: { title: string; classes: V1IngressClass[]; ingress: V1Ingress; ours: boolean }[] = [
    { title: 'takes ingressClassName tuna without any IngressClass', classes: [], ingress: ingress('tuna'), ours: true },
    { title: 'takes a class whose controller is tuna', classes: [ingressClass('public', tuna)], ingress: ingress('public'), ours: true },
    { title: 'leaves class tuna run by another controller', classes: [ingressClass('tuna', 'k8s.io/ingress-nginx')], ingress: ingress('tuna'), ours: false },
    { title: 'leaves an unknown class', classes: [], ingress: ingress('nginx'), ours: false },
    { title: 'takes the legacy annotation tuna', classes: [], ingress: ingress(undefined, 'tuna'), ours: true },
    { title: 'leaves the legacy annotation nginx', classes: [], ingress: ingress(undefined, 'nginx'), ours: false },
    { title: 'lets the field win over the annotation', classes: [], ingress: ingress('nginx', 'tuna'), ours: false },
    { title: 'takes a classless Ingress when tuna is the default', classes: [ingressClass('tuna', tuna, true)], ingress: ingress(), ours: true },
    { title: 'leaves a classless Ingress when another class is the default', classes: [ingressClass('nginx', 'k8s.io/ingress-nginx', true), ingressClass('tuna', tuna)], ingress: ingress(), ours: false },
  ];
  for (const t of table)
    it(t.title, () => {
      const via = ingressClassMatcher(t.classes, defaultTranslateOptions).claim(t.ingress);
      expect(via !== undefined).to.equal(t.ours);
    });
});
