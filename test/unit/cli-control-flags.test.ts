import { expect } from 'chai';
import * as t from 'io-ts';
import { DurationString, LabelString, parseControlUrl, resolveControlContext } from '../../src/cli/control-options.js';
import { UsageError } from '../../src/cli/errors.js';
import { decodeFlags } from '../../src/cli/flags.js';
import { formatLabels, formatTable, formatTime } from '../../src/cli/table.js';

describe('cli control flags', () => {
  describe('parseControlUrl', () => {
    const cases: [string, string][] = [
      ['https://edge.example.com:7443', 'https://edge.example.com:7443/'],
      ['https://edge.example.com', 'https://edge.example.com/'],
      ['http://127.0.0.1:7000/', 'http://127.0.0.1:7000/'],
      ['tls://edge.example.com:7443', 'https://edge.example.com:7443/'],
      ['tcp://127.0.0.1:7000', 'http://127.0.0.1:7000/'],
      ['edge.example.com:7443', 'https://edge.example.com:7443/'],
      ['http://[::1]:7000', 'http://[::1]:7000/'],
    ];
    for (const [text, want] of cases) it(`reads ${text} as ${want}`, () => expect(parseControlUrl(text).href).to.equal(want));

    for (const bad of ['edge.example.com', 'ftp://edge:21', 'https://edge:0', 'https://edge:70000', 'https://edge:7443/v1', 'tcp://edge'])
      it(`refuses ${bad} naming the flag`, () => expect(() => parseControlUrl(bad)).to.throw(UsageError, '--edge'));
  });

  describe('DurationString', () => {
    const cases: [string, number][] = [
      ['720h', 720 * 3600],
      ['30d', 30 * 86400],
      ['1h30m', 5400],
      ['90s', 90],
      ['1d2h3m4s', 86400 + 7200 + 180 + 4],
    ];
    for (const [text, seconds] of cases) it(`reads ${text} as ${seconds} s`, () => expect(decodeFlags(t.type({ expires: DurationString }), { expires: text }, 'keys')).to.deep.equal({ expires: seconds }));
    for (const bad of ['', '0h', '10', '1.5h', '30m1h', '-1h', '1w'])
      it(`refuses ${JSON.stringify(bad)} naming --expires`, () =>
        expect(() => decodeFlags(t.type({ expires: DurationString }), { expires: bad }, 'keys')).to.throw(UsageError, '--expires'));
  });

  describe('LabelString', () => {
    it('splits at the first = so values may hold one', () =>
      expect(decodeFlags(t.type({ label: t.array(LabelString) }), { label: ['cluster=prod', 'q=a=b'] }, 'keys')).to.deep.equal({ label: [['cluster', 'prod'], ['q', 'a=b']] }));
    for (const bad of ['cluster', '=prod'])
      it(`refuses ${bad} naming --label`, () => expect(() => decodeFlags(t.type({ label: t.array(LabelString) }), { label: [bad] }, 'keys')).to.throw(UsageError, '--label'));
  });

  describe('resolveControlContext', () => {
    it('takes the edge and the API key from the environment', async () => {
      const ctx = await resolveControlContext({ json: true }, { TUNA_EDGE: 'tcp://127.0.0.1:7000', TUNA_API_KEY: 'tuna_ak_x' }, 'keys');
      expect(ctx.isJson).to.equal(true);
    });
    it('says when the API key is missing', async () => {
      const err = await resolveControlContext({ edge: 'https://e:1' }, {}, 'keys').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(UsageError);
      expect((err as Error).message).to.contain('--api-key');
    });
    it('says when the edge is missing', async () => {
      const err = await resolveControlContext({}, { TUNA_API_KEY: 'k' }, 'keys').catch((e: unknown) => e);
      expect((err as Error).message).to.contain('TUNA_EDGE');
    });
    it('refuses --ca for an http:// edge', async () => {
      const err = await resolveControlContext({ edge: 'http://127.0.0.1:1', ca: 'ca.pem' }, { TUNA_API_KEY: 'k' }, 'keys').catch((e: unknown) => e);
      expect((err as Error).message).to.contain('--ca applies to https://');
    });
  });

  describe('formatTable', () => {
    it('aligns columns to the widest cell, without trailing spaces, with - for empty cells', () => {
      expect(formatTable(['ID', 'NAME', 'LABELS'], [['a1', 'first', ''], ['b', 'n', 'x=y']])).to.equal(
        ['ID  NAME   LABELS', 'a1  first  -', 'b   n      x=y'].join('\n'),
      );
    });
    it('prints only the header for no rows', () => expect(formatTable(['ID', 'NAME'], [])).to.equal('ID  NAME'));
    it('sorts labels by key', () => expect(formatLabels({ z: '1', a: '2' })).to.equal('a=2,z=1'));
    it('prints times as UTC to the second', () => expect(formatTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).to.equal('2026-01-02T03:04:05Z'));
  });
});
