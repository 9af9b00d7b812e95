/**
 * src/codec: the shared io-ts helpers — loose objects and lists (null is absent, unknown keys kept),
 * JSON text, and errors that name the field.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeWith, firstProblem, jsonText, looseList, looseNumber, looseObject, looseString, required } from '../../src/codec/index.js';
import { httpRouteCodec, malformedField } from '../../src/translate/gateway/codecs.js';

const pair = looseObject('Pair', { name: required(looseString), port: looseNumber });

describe('loose codecs', () => {
  it('keeps unknown keys and returns the value itself when nothing is transformed', () => {
    const value = { name: 'a', extra: { deep: true } };
    const result = pair.decode(value);
    expect(result._tag === 'Right' && result.right).to.equal(value);
  });

  it('counts null as absent, except for a required field', () => {
    expect(decodeWith(pair, { name: 'a', port: null })).to.deep.equal({ ok: true, value: { name: 'a', port: null } });
    expect(decodeWith(pair, { name: null })).to.deep.equal({ ok: false, errors: ['name: required'] });
  });

  it('refuses an empty list entry and a non-finite number, naming the index', () => {
    expect(decodeWith(looseList(pair), [{ name: 'a' }, null, { name: 'b', port: Infinity }])).to.deep.equal({
      ok: false,
      errors: ['[1]: empty entry', '[2].port: expected a number'],
    });
  });

  it('reports the first problem in field order, under a root name', () => {
    const codec = looseObject('Spec', { b: looseString, a: looseString });
    expect(firstProblem(codec, { a: 1, b: 2 }, 'spec')).to.equal('spec.b: expected a string');
    expect(firstProblem(codec, 'x', 'spec')).to.equal('spec: expected an object');
    expect(firstProblem(codec, { a: 'x' }, 'spec')).to.equal(undefined);
  });

  it('names the exact field of a malformed HTTPRoute match', () => {
    const route = { spec: { rules: [{ matches: [{ path: { type: 'Exact', value: '/' } }, { path: { type: 7 } }] }] } };
    expect(malformedField(httpRouteCodec, route)).to.equal('spec.rules[0].matches[1].path.type: expected a string');
  });
});

describe('jsonText', () => {
  const labels = jsonText(t.record(t.string, looseString));

  it('parses and decodes in one step', () => {
    expect(decodeWith(labels, '{"a":"b"}')).to.deep.equal({ ok: true, value: { a: 'b' } });
  });

  it('names the field inside the JSON, and says only "expected JSON text" for text that is not JSON', () => {
    expect(decodeWith(looseObject('Row', { labels }), { labels: '{"a":1}' })).to.deep.equal({ ok: false, errors: ['labels.a: expected a string'] });
    expect(decodeWith(labels, '{"token":"secret')).to.deep.equal({ ok: false, errors: ['expected JSON text'] });
  });
});
