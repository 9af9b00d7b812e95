import { expect } from 'chai';
import { ProcessGroup, crashSummary } from '../processes.js';

describe('bench/tunnel process group', () => {
  let group: ProcessGroup;

  beforeEach(() => {
    group = new ProcessGroup();
  });

  afterEach(async () => {
    await group.close();
  });

  it('reports a process that exits without being stopped, with its last output', async () => {
    const log = console.log;
    console.log = () => undefined;
    try {
      const proc = group.start('crasher', process.execPath, ['-e', 'console.error("edge: boom"); process.exit(3)'], 10_000);
      expect(await proc.exited).to.equal(3);
    } finally {
      console.log = log;
    }
    expect(group.unexpectedExits).to.deep.equal(['crasher exited 3 without being stopped: edge: boom']);
  });

  it('does not report a process it stopped itself', async () => {
    const proc = group.start('sleeper', process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], 10_000);
    await group.stop(proc);
    expect(proc.child.signalCode).to.equal('SIGTERM');
    expect(group.unexpectedExits).to.deep.equal([]);
  });

  it('kills a command that outlives its time bound', async () => {
    await group.run('hang', process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], 300).then(
      () => expect.fail('a hanging command completed'),
      (err: { code?: string }) => expect(err.code).to.equal('TUNA_BENCH_TIMEOUT'),
    );
  });
});

describe('bench/tunnel crash summary', () => {
  it('picks the error line out of a Node crash, not the version footer', () => {
    const output = 'file:///x/edge.js:10\n  throw err;\n  ^\n\nTypeError: cannot read x\n    at f (file:///x/edge.js:10:3)\n\nNode.js v24.22.3\n';
    expect(crashSummary(output)).to.equal('TypeError: cannot read x');
  });

  it('falls back to the last two lines when nothing looks like an error', () => {
    expect(crashSummary('one\ntwo\nthree\n')).to.equal('two | three');
  });
});
