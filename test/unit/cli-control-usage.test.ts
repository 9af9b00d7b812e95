import { expect } from 'chai';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

/** Usage of the control-plane commands, run in-process: help, and usage errors (exit 2) before any request. */
describe('cli control usage', () => {
  async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), env, stopSignal: new Promise<string>(() => undefined) };
    const code = await runCli(argv, io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  const helps: [string[], string][] = [
    [['keys', '--help'], 'Usage: tuna keys create'],
    [['keys', 'create', '--help'], 'Usage: tuna keys create'],
    [['reserve', '--help'], 'Usage: tuna reserve domain'],
    [['release', '-h'], 'Usage: tuna release'],
    [['edge', 'init', '--help'], 'Usage: tuna edge init'],
    [['edge', '--help'], 'Usage: tuna edge --config'],
    [['help', 'keys'], 'Usage: tuna keys create'],
    [['accounts', '--help'], 'Usage: tuna accounts create NAME'],
    [['help', 'accounts'], 'tuna accounts disable ID'],
  ];
  for (const [argv, want] of helps) {
    it(`prints help for tuna ${argv.join(' ')}`, async () => {
      const ran = await run(argv);
      expect(ran.code).to.equal(0);
      expect(ran.out).to.contain(want);
    });
  }

  it('lists the control-plane commands in tuna --help', async () => {
    const ran = await run(['--help']);
    for (const word of ['edge init --store', 'accounts create|list|disable', 'keys create|list|revoke', 'reserve domain|tcp|address|list', 'release <domain|tcp|address>']) expect(ran.out).to.contain(word);
  });

  const env = { TUNA_EDGE: 'tcp://127.0.0.1:9', TUNA_API_KEY: 'tuna_ak_0123456789abcdef_x' };
  const usage: [string[], string][] = [
    [['keys'], 'a subcommand is required'],
    [['keys', 'rotate'], 'unknown subcommand "rotate"'],
    [['keys', 'create'], '--scope is required'],
    [['keys', 'create', '--scope', 'root'], '--scope "root"'],
    [['keys', 'create', '--tunnel', '--protocol', 'http'], '--reservation is required'],
    [['keys', 'create', '--tunnel', '--reservation', 'r', '--protocol', 'ftp'], '--protocol "ftp"'],
    [['keys', 'create', '--tunnel', '--reservation', 'r', '--protocol', 'http', '--expires', '10'], '--expires "10" must be a duration'],
    [['keys', 'create', '--tunnel', '--reservation', 'r', '--protocol', 'http', '--max-connections', '0'], '--max-connections "0"'],
    [['keys', 'create', '--tunnel', '--reservation', 'r', '--protocol', 'http', '--label', 'prod'], '--label "prod" must be key=value'],
    [['keys', 'create', '--tunnel', '--scope', 'admin'], '--scope does not apply here'],
    [['keys', 'list', '--reservation', 'r'], '--reservation does not apply here'],
    [['keys', 'revoke'], 'the key id is required'],
    [['reserve'], 'expected domain <host>, tcp [port], address [ip], list or verify <host>'],
    [['reserve', 'domain'], 'the hostname is required'],
    [['reserve', 'domain', 'a_b.example.com'], '"a_b.example.com" is not a DNS name'],
    [['reserve', 'tcp', '70000'], '"70000" is not a port'],
    [['reserve', 'address', 'nope'], '"nope" is not an IP address'],
    [['release', 'domain'], 'expected <domain|tcp|address> <id|value>'],
    [['release', 'port', '22'], 'expected <domain|tcp|address> <id|value>'],
    [['edge', 'init'], '--store is required'],
    [['accounts'], 'a subcommand is required: create, list or disable'],
    [['accounts', 'rename', 'x'], 'unknown subcommand "rename"'],
    [['accounts', 'create'], 'the account name is required'],
    [['accounts', 'list', 'extra'], 'unexpected argument "extra"'],
    [['accounts', 'disable'], 'the account id is required'],
    [['accounts', 'disable', 'a', 'b'], 'unexpected argument "b"'],
    [['edge', 'init', '--store', 'x.db', '--schema', 's'], '--schema applies to postgres:// stores only'],
  ];
  for (const [argv, want] of usage) {
    it(`refuses tuna ${argv.join(' ')} with exit status 2 and a line naming the problem`, async () => {
      const ran = await run(argv, env);
      expect(ran.code).to.equal(2);
      expect(ran.out).to.equal('');
      expect(ran.err).to.contain(want);
      expect(ran.err.split('\n')).to.have.length(1);
    });
  }

  it('refuses a control command without an edge or without an API key, naming the variable', async () => {
    expect((await run(['reserve', 'list'], { TUNA_API_KEY: 'k' })).err).to.contain('TUNA_EDGE');
    expect((await run(['reserve', 'list'], { TUNA_EDGE: 'tcp://127.0.0.1:9' })).err).to.contain('TUNA_API_KEY');
  });
});
