// dns-corefile.ts — reads a CoreDNS Corefile and decides, per zone, what the coredns stand-in can
// honestly serve on this machine.
//
// The stand-in knows four plugins: `whoami` (answered here, as coredns does), `forward` (never
// followed: it would send queries off this machine, so its zones are REFUSED — unless, as in
// coredns, a plugin is listed but never reached), `log` (queries are logged) and `errors` (errors
// are logged). Any other plugin, snippet, import or environment substitution is an error naming
// the line, so a Corefile is never served as something it is not.
import net from 'node:net';

/** CorefileError is a Corefile the stand-in cannot read or cannot serve (message names the line). */
export class CorefileError extends Error {
  readonly code = 'TUNA_COREFILE';
}

/** CorefileDirective is one plugin line of a server block, with its nested block's lines. */
export interface CorefileDirective {
  readonly name: string;
  readonly args: readonly string[];
  readonly block: readonly (readonly string[])[];
  readonly line: number;
}

/** CorefileServerBlock is one `zone[:port] ... { plugins }` block. */
export interface CorefileServerBlock {
  readonly keys: readonly { readonly zone: string; readonly port: number }[];
  readonly directives: readonly CorefileDirective[];
  readonly line: number;
}

/** ZonePlan is what the stand-in does with the queries of one zone on one port. */
export interface ZonePlan {
  readonly zone: string;
  readonly port: number;
  readonly action: 'whoami' | 'refuse';
  /** reason says, in words, why this zone is served or refused (printed at start). */
  readonly reason: string;
  readonly logQueries: boolean;
  readonly logErrors: boolean;
}

interface Token {
  readonly text: string;
  readonly line: number;
  readonly quoted: boolean;
}

/** tokenize splits a Corefile into words, keeping quoted strings whole and dropping # comments. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  for (let i = 0; i < text.length; ) {
    const c = text[i] ?? '';
    if (c === '\n') line++;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      const start = line;
      let word = '';
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\' && text[i + 1] === '"') i++;
        if (text[i] === '\n') line++;
        word += text[i];
      }
      if (i >= text.length) throw new CorefileError(`line ${start}: quoted string is not closed`);
      i++;
      tokens.push({ text: word, line: start, quoted: true });
      continue;
    }
    let word = '';
    while (i < text.length && !/\s/.test(text[i] ?? '')) word += text[i++];
    tokens.push({ text: word, line, quoted: false });
  }
  return tokens;
}

/** parseKey reads a server block key such as `.:53`, `dns://example.org`, `foo.bar.com:1053`. */
function parseKey(token: Token, defaultPort: number): { zone: string; port: number } {
  let key = token.text.replace(/,$/, '');
  const scheme = /^([a-z+]+):\/\//.exec(key);
  if (scheme) {
    if (scheme[1] !== 'dns') throw new CorefileError(`line ${token.line}: ${scheme[1]}:// servers are not supported by the coredns stand-in (only plain DNS)`);
    key = key.slice(scheme[0].length);
  }
  const match = /^([^:]*)(?::(\d+))?$/.exec(key);
  if (!match || key.includes('/')) throw new CorefileError(`line ${token.line}: server block key "${token.text}" is not a zone[:port] (reverse zones and CIDR keys are not supported)`);
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CorefileError(`line ${token.line}: port ${match[2]} is out of range`);
  const zone = (match[1] ?? '').toLowerCase();
  if (zone === '') throw new CorefileError(`line ${token.line}: server block key "${token.text}" has no zone`);
  return { zone: zone === '.' ? '.' : `${zone.replace(/\.$/, '')}.`, port };
}

/** parseCorefile reads every server block; `defaultPort` is coredns's -dns.port (53). */
export function parseCorefile(text: string, defaultPort = 53): CorefileServerBlock[] {
  const tokens = tokenize(text);
  const blocks: CorefileServerBlock[] = [];
  let i = 0;
  while (i < tokens.length) {
    const first = tokens[i] as Token;
    if (/^\(.*\)$/.test(first.text)) throw new CorefileError(`line ${first.line}: snippets ("${first.text}") are not supported by the coredns stand-in`);
    if (first.text.includes('{$')) throw new CorefileError(`line ${first.line}: environment substitution is not supported by the coredns stand-in`);
    const keys = [];
    while (i < tokens.length && (tokens[i] as Token).text !== '{') {
      const token = tokens[i] as Token;
      if (token.line !== first.line) throw new CorefileError(`line ${first.line}: server block "${first.text}" has no "{" (blocks without braces are not supported)`);
      keys.push(parseKey(token, defaultPort));
      i++;
    }
    if (i >= tokens.length) throw new CorefileError(`line ${first.line}: server block "${first.text}" has no "{"`);
    i++; // the opening brace
    const directives: CorefileDirective[] = [];
    for (;;) {
      const token = tokens[i];
      if (!token) throw new CorefileError(`line ${first.line}: server block "${first.text}" is not closed with "}"`);
      if (token.text === '}' && !token.quoted) {
        i++;
        break;
      }
      const line = token.line;
      const words: Token[] = [];
      while (i < tokens.length && (tokens[i] as Token).line === line && !((tokens[i] as Token).text === '}' && !(tokens[i] as Token).quoted)) {
        words.push(tokens[i] as Token);
        i++;
      }
      const opensBlock = words.length > 1 && words[words.length - 1]?.text === '{';
      if (opensBlock) words.pop();
      const block: string[][] = [];
      if (opensBlock) {
        for (;;) {
          const inner = tokens[i];
          if (!inner) throw new CorefileError(`line ${line}: block of ${words[0]?.text} is not closed with "}"`);
          if (inner.text === '}' && !inner.quoted) {
            i++;
            break;
          }
          const innerWords: string[] = [];
          while (i < tokens.length && (tokens[i] as Token).line === inner.line && (tokens[i] as Token).text !== '}') innerWords.push((tokens[i++] as Token).text);
          block.push(innerWords);
        }
      }
      const [name, ...args] = words.map((word) => word.text);
      if (name === undefined) throw new CorefileError(`line ${line}: empty directive`);
      directives.push({ name, args, block, line });
    }
    blocks.push({ keys, directives, line: first.line });
  }
  if (blocks.length === 0) throw new CorefileError('the Corefile has no server block');
  return blocks;
}

/** isLocalUpstream says whether a forward destination stays on this machine (loopback only). */
export function isLocalUpstream(destination: string): boolean {
  const host = destination.replace(/^dns:\/\//, '').replace(/^\[(.*)\](?::\d+)?$/, '$1').replace(/^([^:]+):\d+$/, '$1');
  if (net.isIPv4(host)) return host.startsWith('127.');
  return host === '::1';
}

/** planBlock decides one block's action, following coredns's plugin order (forward before whoami). */
function planBlock(block: CorefileServerBlock): Omit<ZonePlan, 'zone' | 'port'> {
  const known = new Set(['whoami', 'forward', 'log', 'errors']);
  for (const directive of block.directives) {
    if (!known.has(directive.name)) {
      throw new CorefileError(`line ${directive.line}: plugin "${directive.name}" is not supported by the coredns stand-in (it serves whoami, refuses forward, honours log and errors)`);
    }
  }
  const logQueries = block.directives.some((d) => d.name === 'log');
  const logErrors = block.directives.some((d) => d.name === 'errors');
  const forward = block.directives.find((d) => d.name === 'forward');
  if (forward) {
    const [from, ...to] = forward.args;
    if (from === undefined || to.length === 0) throw new CorefileError(`line ${forward.line}: forward needs a FROM zone and at least one TO address`);
    const fromZone = from === '.' ? '.' : `${from.toLowerCase().replace(/\.$/, '')}.`;
    if (fromZone !== '.' && block.keys.some((key) => key.zone !== fromZone)) {
      throw new CorefileError(`line ${forward.line}: forward ${from} covers only part of the block's zone (not supported by the coredns stand-in)`);
    }
    const outside = to.filter((destination) => !isLocalUpstream(destination));
    const reason =
      outside.length > 0
        ? `forward to ${outside.join(', ')} would leave this machine (tests send traffic only to loopback and their own pods)`
        : `forward to ${to.join(', ')} is not implemented by the stand-in`;
    return { action: 'refuse', reason, logQueries, logErrors };
  }
  if (block.directives.some((d) => d.name === 'whoami')) {
    return { action: 'whoami', reason: "whoami: the client's address as A/AAAA and its port as SRV, in the additional section", logQueries, logErrors };
  }
  return { action: 'refuse', reason: 'no plugin of this block answers queries', logQueries, logErrors };
}

/** planCorefile turns the parsed blocks into one plan per zone and port; a zone twice on a port is an error. */
export function planCorefile(blocks: readonly CorefileServerBlock[]): ZonePlan[] {
  const plans: ZonePlan[] = [];
  for (const block of blocks) {
    const plan = planBlock(block);
    for (const key of block.keys) {
      if (plans.some((p) => p.zone === key.zone && p.port === key.port)) {
        throw new CorefileError(`line ${block.line}: zone ${key.zone} on port ${key.port} is defined twice`);
      }
      plans.push({ ...key, ...plan });
    }
  }
  return plans;
}

/** findZone picks the plan of the longest zone that contains `name` on `port`, as coredns does. */
export function findZone(plans: readonly ZonePlan[], port: number, name: string): ZonePlan | undefined {
  let best: ZonePlan | undefined;
  for (const plan of plans) {
    if (plan.port !== port) continue;
    const inZone = plan.zone === '.' || name === plan.zone || name.endsWith(`.${plan.zone}`);
    if (inZone && (!best || plan.zone.length > best.zone.length)) best = plan;
  }
  return best;
}

/** StandInOptions are the coredns flags the stand-in understands. */
export interface StandInOptions {
  readonly conf: string;
  readonly port: number;
}

/** parseStandInArgs reads `-conf FILE` and `-dns.port PORT` (also with `--` and `=`); others are errors. */
export function parseStandInArgs(argv: readonly string[]): StandInOptions {
  let conf = 'Corefile';
  let port = 53;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.replace(/^--?/, '-').split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new CorefileError(`flag ${flag} needs a value`);
      return v;
    };
    if (flag === '-conf') conf = value();
    else if (flag === '-dns.port') {
      port = Number(value());
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CorefileError(`flag -dns.port: ${port} is not a port`);
    } else throw new CorefileError(`flag ${arg} is not supported by the coredns stand-in (it reads -conf and -dns.port)`);
  }
  return { conf, port };
}
