import { expect } from 'chai';
import { DatagramReader, DatagramTooLargeError, MAX_DATAGRAM_BYTES, frameDatagram } from '../../src/wire/index.js';

/** read pushes chunks into a reader and returns every datagram handed out. */
function read(reader: DatagramReader, ...chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const chunk of chunks) reader.push(chunk, (d) => out.push(d));
  return out;
}

function payload(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

describe('datagram framing of UDP flows', () => {
  it('prefixes a datagram with its length as two big-endian bytes', () => {
    const frame = frameDatagram(Buffer.from('hello'));
    expect([...frame.subarray(0, 2)]).to.deep.equal([0, 5]);
    expect(frame.subarray(2).toString()).to.equal('hello');
    expect([...frameDatagram(payload(300, 1)).subarray(0, 2)]).to.deep.equal([1, 44]);
  });

  it('reads back datagrams that arrive joined in one chunk, in order', () => {
    const sizes = [3, 0, 1200, 1, 65_507];
    const datagrams = sizes.map((n, i) => payload(n, i));
    const reader = new DatagramReader();
    const out = read(reader, Buffer.concat(datagrams.map(frameDatagram)));
    expect(out.map((d) => d.length)).to.deep.equal(sizes);
    out.forEach((d, i) => expect(d.equals(datagrams[i]!)).to.equal(true));
    expect(reader.hasPartial).to.equal(false);
  });

  it('reassembles datagrams split across chunks at every byte position', () => {
    const datagrams = [payload(7, 1), payload(0, 2), payload(40, 3)];
    const stream = Buffer.concat(datagrams.map(frameDatagram));
    for (let cut = 1; cut < stream.length; cut++) {
      const reader = new DatagramReader();
      const out = read(reader, stream.subarray(0, cut), stream.subarray(cut));
      expect(out.map((d) => d.toString('hex')), `cut at ${cut}`).to.deep.equal(datagrams.map((d) => d.toString('hex')));
    }
  });

  it('reassembles a datagram fed one byte at a time', () => {
    const datagram = payload(1000, 9);
    const frame = frameDatagram(datagram);
    const reader = new DatagramReader();
    const out: Buffer[] = [];
    for (let i = 0; i < frame.length; i++) {
      out.push(...read(reader, frame.subarray(i, i + 1)));
      expect(reader.hasPartial).to.equal(i < frame.length - 1);
    }
    expect(out).to.have.length(1);
    expect(out[0]!.equals(datagram)).to.equal(true);
  });

  it('carries a zero-length datagram as a datagram of its own', () => {
    const reader = new DatagramReader();
    const out = read(reader, Buffer.concat([frameDatagram(Buffer.alloc(0)), frameDatagram(Buffer.alloc(0))]));
    expect(out.map((d) => d.length)).to.deep.equal([0, 0]);
  });

  it('refuses to frame a datagram above 65,507 bytes', () => {
    expect(() => frameDatagram(Buffer.alloc(MAX_DATAGRAM_BYTES + 1))).to.throw(DatagramTooLargeError).with.property('code', 'TUNA_DATAGRAM_TOO_LARGE');
    expect(frameDatagram(Buffer.alloc(MAX_DATAGRAM_BYTES))).to.have.length(MAX_DATAGRAM_BYTES + 2);
  });

  it('throws at a length field above the limit, after handing out the datagrams before it', () => {
    const reader = new DatagramReader();
    const good = frameDatagram(Buffer.from('ok'));
    const out: string[] = [];
    // 0xFFEC = 65,516 > 65,507: malformed; the reader must not wait for 65 KiB that never come
    expect(() => reader.push(Buffer.concat([good, Buffer.from([0xff, 0xec])]), (d) => out.push(d.toString()))).to.throw(DatagramTooLargeError);
    expect(out).to.deep.equal(['ok']);
    const split = new DatagramReader();
    expect(() => split.push(Buffer.from([0xff]), () => undefined)).not.to.throw();
    expect(() => split.push(Buffer.from([0xff]), () => undefined)).to.throw(DatagramTooLargeError);
  });
});
