import { expect } from 'chai';
import { Refreshing } from '../../src/dataplane/policies/refreshing.js';
import type { Fetched } from '../../src/dataplane/policies/refreshing.js';

/** A document source the test answers by hand: each load waits until the test resolves or rejects it. */
function manualSource(): {
  loads: { prior: number | undefined; resolve: (v: number) => void; reject: (e: Error) => void }[];
  load: (prior: number | undefined) => Promise<number>;
} {
  const loads: { prior: number | undefined; resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  return {
    loads,
    load: (prior) =>
      new Promise<number>((resolve, reject) => {
        loads.push({ prior, resolve, reject });
      }),
  };
}

const settled = (f: Fetched<number> | Promise<Fetched<number>>): Promise<Fetched<number>> => Promise.resolve(f);

describe('Refreshing (a document fetched from an identity provider)', () => {
  let now = 0;
  const failures: string[] = [];
  const make = (src: ReturnType<typeof manualSource>, cooldownMs = 10_000): Refreshing<number> =>
    new Refreshing<number>('not fetched yet', {
      load: src.load,
      now: () => now,
      refreshMs: 3_600_000,
      cooldownMs,
      onFailure: (reason) => {
        failures.push(reason);
        return `unavailable: ${reason}`;
      },
    });
  beforeEach(() => {
    now = 1_000_000;
    failures.length = 0;
  });

  it('fetches at once, and requests wait for that one fetch instead of starting their own', async () => {
    const src = manualSource();
    const doc = make(src);
    const a = doc.current();
    const b = doc.fresh();
    expect(src.loads).to.have.length(1);
    src.loads[0]!.resolve(7);
    expect(await settled(a)).to.deep.equal({ kind: 'ready', value: 7 });
    expect(await settled(b)).to.deep.equal({ kind: 'ready', value: 7 });
    expect(doc.current()).to.deep.equal({ kind: 'ready', value: 7 });
    expect(src.loads).to.have.length(1);
    doc.stop();
  });

  it('keeps the last good value when a fetch fails, and says the reason only while it has none', async () => {
    const src = manualSource();
    const doc = make(src, 0);
    src.loads[0]!.reject(new Error('answered 500'));
    expect(await settled(doc.current())).to.deep.equal({ kind: 'unavailable', reason: 'unavailable: answered 500' });
    const again = doc.fresh();
    src.loads[1]!.resolve(3);
    expect(await settled(again)).to.deep.equal({ kind: 'ready', value: 3 });
    const third = doc.fresh();
    expect(src.loads[2]!.prior, 'a load is given the value in force').to.equal(3);
    src.loads[2]!.reject(new Error('connect failed', { cause: { code: 'ECONNREFUSED' } }));
    expect(await settled(third)).to.deep.equal({ kind: 'ready', value: 3 });
    expect(failures).to.deep.equal(['answered 500', 'connect failed (ECONNREFUSED)']);
    doc.stop();
  });

  it('starts no fetch asked for by requests within the cooldown of the last one', async () => {
    const src = manualSource();
    const doc = make(src, 10_000);
    src.loads[0]!.resolve(1);
    await settled(doc.current());
    now += 9_999;
    expect(doc.fresh()).to.deep.equal({ kind: 'ready', value: 1 });
    expect(src.loads).to.have.length(1);
    now += 1;
    const f = doc.fresh();
    expect(src.loads).to.have.length(2);
    src.loads[1]!.resolve(2);
    expect(await settled(f)).to.deep.equal({ kind: 'ready', value: 2 });
    expect(doc.known()).to.equal(2);
    doc.stop();
  });
});
