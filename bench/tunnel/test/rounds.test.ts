import { expect } from 'chai';
import type { Contender } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import type { Running } from '../rounds.js';
import { inRounds, rotate, unavailableReason } from '../rounds.js';
import { emptyFigures } from '../table.js';

function running(name: string): Running {
  const contender: Contender = { name, describe: () => name, start: () => Promise.resolve({ port: 1 }), stop: () => Promise.resolve() };
  return { contender, target: { port: 1 }, figures: emptyFigures(name, name) };
}

describe('bench/tunnel rounds', () => {
  let log: typeof console.log;
  beforeEach(() => {
    log = console.log;
    console.log = () => undefined;
  });
  afterEach(() => {
    console.log = log;
  });

  it('rotates the order by one each round, wrapping around', () => {
    expect(rotate(['a', 'b', 'c'], 1)).to.deep.equal(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 4)).to.deep.equal(['b', 'c', 'a']);
    expect(rotate([], 2)).to.deep.equal([]);
  });

  it('visits every contender in every round in rotated order', async () => {
    const visits: string[] = [];
    const done = await inRounds([running('a'), running('b'), running('c')], 3, 'x', (r, round) => {
      visits.push(`${round}${r.contender.name}`);
      return Promise.resolve('ok');
    });
    expect(done).to.equal(3);
    expect(visits).to.deep.equal(['0a', '0b', '0c', '1b', '1c', '1a', '2c', '2a', '2b']);
  });

  it('records a failed measurement on its contender and goes on with the others', async () => {
    const a = running('a');
    const b = running('b');
    let bCalls = 0;
    await inRounds([a, b], 2, 'upload', (r) => {
      if (r === a) return Promise.reject(new Error('curl exit 28\nmore detail'));
      bCalls++;
      return Promise.resolve('ok');
    });
    expect(a.figures.failures).to.deep.equal(['upload round 1: curl exit 28', 'upload round 2: curl exit 28']);
    expect(bCalls).to.equal(2);
  });

  it('starts no round after the first once the deadline has passed', async () => {
    let calls = 0;
    const done = await inRounds([running('a')], 5, 'x', () => Promise.resolve(String(++calls)), performance.now() - 1);
    expect(done).to.equal(1);
    expect(calls).to.equal(1);
  });

  it('gives the reason of an unavailable contender without its name', () => {
    expect(unavailableReason(new ContenderUnavailableError('tuna', 'tuna edge exited 1\nstack'))).to.equal('tuna edge exited 1');
    expect(unavailableReason(new Error('boom'))).to.equal('boom');
  });
});
