/**
 * Regular expressions in Gateway API matches are "implementation-specific"; tuna accepts the RE2
 * subset that also means the same in JavaScript, because the data plane runs them on V8's
 * backtracking engine, where one bad pattern could pin a CPU (ReDoS). Refused: patterns that do not
 * compile, backreferences, lookarounds and other non-RE2 groups, and nested unbounded quantifiers
 * such as `(a+)+` or `(a|b*)*` — the shape behind catastrophic backtracking.
 */

/** MAX_PATTERN_LENGTH bounds a pattern; longer ones are refused. */
export const MAX_PATTERN_LENGTH = 1024;

/** RegexVerdict says whether a pattern is accepted, and why not. */
export type RegexVerdict = { ok: true } | { ok: false; message: string };

/** checkRegex validates a match pattern for the data plane (see the file comment). */
export function checkRegex(pattern: string): RegexVerdict {
  if (pattern.length > MAX_PATTERN_LENGTH) return fail(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  try {
    new RegExp(pattern);
  } catch {
    return fail('is not a valid regular expression');
  }
  return scan(pattern);
}

function fail(why: string): RegexVerdict {
  return { ok: false, message: `regular expression ${why}` };
}

interface Group {
  /** the group holds an unbounded quantifier (`*`, `+`, `{n,}`) somewhere inside */
  hasUnbounded: boolean;
}

/** scan walks the pattern once, tracking groups, to find the constructs RE2 lacks or that backtrack. */
function scan(p: string): RegexVerdict {
  const stack: Group[] = [{ hasUnbounded: false }];
  // lastAtomUnbounded: the atom just closed (a group) contains an unbounded quantifier.
  let lastAtomUnbounded = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    const top = stack[stack.length - 1] as Group;
    if (c === '\\') {
      const n = p[i + 1] ?? '';
      if (/[1-9]/.test(n) || n === 'k') return fail('uses a backreference, which RE2 does not support');
      i++;
      lastAtomUnbounded = false;
      continue;
    }
    if (c === '[') {
      i = skipClass(p, i);
      lastAtomUnbounded = false;
      continue;
    }
    if (c === '(') {
      if (p[i + 1] === '?') {
        const rest = p.slice(i + 2, i + 4);
        if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!')
          return fail('uses a lookaround, which RE2 does not support');
        if (!rest.startsWith(':') && !rest.startsWith('<')) return fail('uses a group syntax RE2 does not support');
      }
      stack.push({ hasUnbounded: false });
      lastAtomUnbounded = false;
      continue;
    }
    if (c === ')') {
      const closed = stack.pop() as Group;
      lastAtomUnbounded = closed.hasUnbounded;
      const parent = stack[stack.length - 1] as Group;
      parent.hasUnbounded ||= closed.hasUnbounded;
      continue;
    }
    const q = quantifierAt(p, i);
    if (q) {
      if (q.repeats && lastAtomUnbounded) return fail('nests unbounded quantifiers (catastrophic backtracking)');
      if (q.unbounded) top.hasUnbounded = true;
      i = q.end;
      lastAtomUnbounded = false;
      continue;
    }
    lastAtomUnbounded = false;
  }
  return { ok: true };
}

/** skipClass returns the index of the `]` closing the character class opened at `start`. */
function skipClass(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === '^') i++;
  if (p[i] === ']') i++;
  for (; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === ']') return i;
  }
  return p.length;
}

interface Quantifier {
  /** the quantifier allows more than one repetition */
  repeats: boolean;
  unbounded: boolean;
  /** index of the quantifier's last character (a lazy `?` included) */
  end: number;
}

function quantifierAt(p: string, i: number): Quantifier | undefined {
  const c = p[i];
  let q: Quantifier | undefined;
  if (c === '*' || c === '+') q = { repeats: true, unbounded: true, end: i };
  else if (c === '?') q = { repeats: false, unbounded: false, end: i };
  else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
    if (!m) return undefined;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === '' ? Infinity : Number(m[3]);
    q = { repeats: max > 1, unbounded: max === Infinity, end: i + m[0].length - 1 };
  }
  if (q && p[q.end + 1] === '?') q.end++;
  return q;
}
