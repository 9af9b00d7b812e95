/**
 * A PromQL reader for the chart tests: it parses an expression of the Prometheus query language
 * (selectors, matchers, ranges and subqueries, offset and @, aggregations with by/without, function
 * calls, binary operators with bool, on/ignoring and group_left/group_right) and returns the
 * selectors it uses, each with the functions it sits in. It checks the syntax, not types; an
 * unknown function, an unbalanced bracket, a bad duration or a stray token throws with the
 * offset. Enough to hold the charts' dashboards and alerts to the metrics the code exports.
 */

/** Selector is one vector selector of an expression. */
export interface Selector {
  /** the metric name (from `name{…}` or a `__name__="…"` matcher) */
  name: string;
  /** the functions it is an argument of, innermost first (`rate`, `histogram_quantile` …) */
  within: string[];
}

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);

const FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atanh', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min',
  'cos', 'cosh', 'count_over_time', 'day_of_month', 'day_of_week', 'day_of_year', 'days_in_month', 'deg', 'delta', 'deriv', 'exp', 'floor', 'histogram_avg',
  'histogram_count', 'histogram_fraction', 'histogram_quantile', 'histogram_stddev', 'histogram_stdvar', 'histogram_sum', 'hour', 'idelta', 'increase', 'irate',
  'label_join', 'label_replace', 'last_over_time', 'ln', 'log10', 'log2', 'mad_over_time', 'max_over_time', 'min_over_time', 'minute', 'month', 'pi',
  'predict_linear', 'present_over_time', 'quantile_over_time', 'rad', 'rate', 'resets', 'round', 'scalar', 'sgn', 'sin', 'sinh', 'sort', 'sort_desc',
  'sort_by_label', 'sort_by_label_desc', 'sqrt', 'stddev_over_time', 'stdvar_over_time', 'sum_over_time', 'tan', 'tanh', 'time', 'timestamp', 'vector', 'year',
]);

const SET_OPERATORS = new Set(['and', 'or', 'unless', 'atan2']);
const COMPARISONS = new Set(['==', '!=', '>', '<', '>=', '<=']);
const ARITHMETIC = new Set(['+', '-', '*', '/', '%', '^']);
const KEYWORDS = new Set([...SET_OPERATORS, 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset']);
const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

type Token = { kind: 'ident' | 'number' | 'string' | 'op' | 'punct'; text: string; at: number };

/** PromQlSyntaxError is an expression the reader cannot parse. */
export class PromQlSyntaxError extends Error {}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (what: string): never => {
    throw new PromQlSyntaxError(`${what} at offset ${i} of ${JSON.stringify(source)}`);
  };
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (/[A-Za-z_:]/.test(c)) {
      const m = /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(source.slice(i))!;
      tokens.push({ kind: 'ident', text: m[0], at: i });
      i += m[0].length;
    } else if (/[0-9.]/.test(c)) {
      const m = /^(0x[0-9a-fA-F]+|(\d+(ms|s|m|h|d|w|y))+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/.exec(source.slice(i));
      if (m === null) fail('a bad number');
      tokens.push({ kind: 'number', text: m![0], at: i });
      i += m![0].length;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += c !== '`' && source[j] === '\\' ? 2 : 1;
      if (j >= source.length) fail('an unterminated string');
      tokens.push({ kind: 'string', text: source.slice(i + 1, j), at: i });
      i = j + 1;
    } else if ('(){}[],@'.includes(c)) {
      tokens.push({ kind: 'punct', text: c, at: i });
      i++;
    } else {
      const m = /^(==|!=|>=|<=|=~|!~|[-+*/%^<>=])/.exec(source.slice(i));
      if (m === null) fail(`an unexpected ${JSON.stringify(c)}`);
      tokens.push({ kind: 'op', text: m![0], at: i });
      i += m![0].length;
    }
  }
  return tokens;
}

/** selectorsOf parses a PromQL expression and returns its vector selectors, in order. */
export function selectorsOf(source: string): Selector[] {
  const tokens = tokenize(source);
  const found: Selector[] = [];
  const within: string[] = [];
  let pos = 0;
  const peek = (offset = 0): Token | undefined => tokens[pos + offset];
  const fail = (what: string): never => {
    const t = peek();
    throw new PromQlSyntaxError(`${what} at offset ${t?.at ?? source.length} of ${JSON.stringify(source)}`);
  };
  const is = (text: string, kind?: Token['kind']): boolean => peek()?.text === text && (kind === undefined || peek()?.kind === kind);
  const expect = (text: string): void => {
    if (!is(text)) fail(`expected ${JSON.stringify(text)}`);
    pos++;
  };
  const duration = (): void => {
    const t = peek();
    if (t?.kind !== 'number' || !DURATION.test(t.text)) fail('expected a duration');
    pos++;
  };
  const labelList = (): void => {
    expect('(');
    while (!is(')')) {
      if (peek()?.kind !== 'ident') fail('expected a label name');
      pos++;
      if (!is(')')) expect(',');
    }
    expect(')');
  };
  const matchers = (): string | undefined => {
    let name: string | undefined;
    expect('{');
    while (!is('}')) {
      const label = peek();
      if (label?.kind !== 'ident' && label?.kind !== 'string') fail('expected a label matcher');
      pos++;
      const op = peek();
      if (op?.kind !== 'op' || !['=', '!=', '=~', '!~'].includes(op.text)) fail('expected =, !=, =~ or !~');
      pos++;
      const value = peek();
      if (value?.kind !== 'string') fail('expected a quoted label value');
      if (label!.text === '__name__' && op!.text === '=') name = value!.text;
      pos++;
      if (!is('}')) expect(',');
    }
    expect('}');
    return name;
  };
  const args = (): void => {
    expect('(');
    while (!is(')')) {
      expr();
      if (!is(')')) expect(',');
    }
    expect(')');
  };
  const grouping = (): void => {
    if (is('by', 'ident') || is('without', 'ident')) {
      pos++;
      labelList();
    }
  };
  const primary = (): void => {
    const t = peek();
    if (t === undefined) return fail('expected an expression');
    if (t.kind === 'number' || t.kind === 'string') {
      pos++;
      return;
    }
    if (t.text === '(') {
      pos++;
      expr();
      return expect(')');
    }
    if (t.text === '{') {
      const name = matchers();
      if (name === undefined) fail('a selector without a metric name');
      found.push({ name: name!, within: [...within].reverse() });
      return;
    }
    if (t.kind !== 'ident') return fail(`unexpected ${JSON.stringify(t.text)}`);
    if (t.text === 'Inf' || t.text === 'NaN' || t.text === 'inf' || t.text === 'nan') {
      pos++;
      return;
    }
    if (AGGREGATIONS.has(t.text) && (peek(1)?.text === '(' || peek(1)?.text === 'by' || peek(1)?.text === 'without')) {
      pos++;
      grouping();
      within.push(t.text);
      args();
      within.pop();
      grouping();
      return;
    }
    if (peek(1)?.text === '(' && peek(1)?.kind === 'punct') {
      if (!FUNCTIONS.has(t.text)) fail(`unknown function ${t.text}`);
      pos++;
      within.push(t.text);
      args();
      within.pop();
      return;
    }
    if (KEYWORDS.has(t.text)) fail(`unexpected keyword ${t.text}`);
    pos++;
    const name = is('{') ? (matchers() ?? t.text) : t.text;
    found.push({ name, within: [...within].reverse() });
  };
  const postfix = (): void => {
    primary();
    for (;;) {
      if (is('[')) {
        pos++;
        duration();
        if (is(':', 'ident') || peek()?.text.startsWith(':')) {
          // a subquery [5m:1m]: the tokenizer reads ":1m" as an identifier
          const step = peek()!;
          pos++;
          if (step.text !== ':' && !DURATION.test(step.text.slice(1))) fail('expected a subquery step');
          if (step.text === ':' && peek()?.kind === 'number') duration();
        }
        expect(']');
      } else if (is('offset', 'ident')) {
        pos++;
        if (is('-')) pos++;
        duration();
      } else if (is('@')) {
        pos++;
        if (peek()?.kind === 'number') pos++;
        else if (is('start', 'ident') || is('end', 'ident')) {
          pos++;
          expect('(');
          expect(')');
        } else fail('expected a timestamp, start() or end()');
      } else return;
    }
  };
  const unary = (): void => {
    while (is('-', 'op') || is('+', 'op')) pos++;
    postfix();
  };
  const binaryOperator = (): boolean => {
    const t = peek();
    if (t === undefined) return false;
    if (t.kind === 'op' && (COMPARISONS.has(t.text) || ARITHMETIC.has(t.text))) {
      pos++;
      if (COMPARISONS.has(t.text) && is('bool', 'ident')) pos++;
    } else if (t.kind === 'ident' && SET_OPERATORS.has(t.text)) pos++;
    else return false;
    if (is('on', 'ident') || is('ignoring', 'ident')) {
      pos++;
      labelList();
    }
    if (is('group_left', 'ident') || is('group_right', 'ident')) {
      pos++;
      if (is('(')) labelList();
    }
    return true;
  };
  function expr(): void {
    unary();
    while (binaryOperator()) unary();
  }
  expr();
  if (pos < tokens.length) fail(`unexpected ${JSON.stringify(peek()!.text)}`);
  return found;
}

/** exportedSeries reads the `# TYPE` lines of an exposition: each series name it may carry, with its family's type (a histogram's _bucket, _sum and _count). */
export function exportedSeries(exposition: string): Map<string, string> {
  const series = new Map<string, string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m as unknown as [string, string, string];
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) series.set(`${name}${suffix}`, type);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) series.set(`${name}${suffix}`, type);
    else series.set(name, type);
  }
  return series;
}
