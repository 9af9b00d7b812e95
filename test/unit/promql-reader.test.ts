import { expect } from 'chai';
import { PromQlSyntaxError, exportedSeries, selectorsOf } from '../support/promql.js';

/** The chart tests' PromQL reader (test/support/promql.ts): what it finds and what it refuses. */
describe('PromQL reader (chart tests)', () => {
  it('finds every selector with the functions it sits in: aggregations, ranges, binary operators, __name__ matchers', () => {
    const found = selectorsOf(
      'histogram_quantile(0.99, sum by (le) (rate(a_bucket{namespace=~"x|y", code!="5.."}[5m]))) > bool 1 and on (namespace) group_left (pod) ' +
        '(max without (pod) (b offset 1h) - time()) / 86400 or {__name__="c", x="y"}[1h:5m] unless -d @ 1700000000',
    );
    expect(found).to.deep.equal([
      { name: 'a_bucket', within: ['rate', 'sum', 'histogram_quantile'] },
      { name: 'b', within: ['max'] },
      { name: 'c', within: [] },
      { name: 'd', within: [] },
    ]);
    expect(selectorsOf('sum(rate(x_total[5m])) by (code)')).to.deep.equal([{ name: 'x_total', within: ['rate', 'sum'] }]);
    expect(selectorsOf('clamp_min((sum(rate(e[5m])) or vector(0)) - 1, 0)')).to.deep.equal([{ name: 'e', within: ['rate', 'sum', 'clamp_min'] }]);
  });

  it('refuses what Prometheus would: an unknown function, unbalanced brackets, a bad duration, a matcher without quotes, a dangling operator', () => {
    for (const bad of ['rat(x[5m])', 'sum(rate(x[5m])', 'x{a="b"', 'rate(x[5])', 'x{a=b}', 'x >', 'sum by (a (x)', 'x y'])
      expect(() => selectorsOf(bad), bad).to.throw(PromQlSyntaxError);
    // valid PromQL, but a selector without a metric name could match any series: the charts never use one
    expect(() => selectorsOf('{namespace="a"}')).to.throw(PromQlSyntaxError, 'without a metric name');
  });

  it('reads the series names of an exposition: a histogram as its _bucket, _sum and _count', () => {
    const text = '# HELP a_total A.\n# TYPE a_total counter\na_total 1\n# TYPE h_seconds histogram\n# TYPE g gauge\n';
    expect([...exportedSeries(text)]).to.deep.equal([
      ['a_total', 'counter'],
      ['h_seconds_bucket', 'histogram'],
      ['h_seconds_sum', 'histogram'],
      ['h_seconds_count', 'histogram'],
      ['g', 'gauge'],
    ]);
  });
});
