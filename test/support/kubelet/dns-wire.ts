// dns-wire.ts — the DNS message format (RFC 1035 §4) as far as the coredns stand-in needs it:
// decode a query's header and question, encode a response with answer/authority/additional records.
import net from 'node:net';

/** DNS_TYPE holds the record types the stand-in reads or writes. */
export const DNS_TYPE = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, ANY: 255 } as const;

/** RCODE holds the response codes the stand-in answers with. */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** RCODE_NAME maps a response code to its mnemonic (for logs). */
export const RCODE_NAME: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(RCODE).map(([name, code]) => [code, name]));

/** MAX_UDP_RESPONSE is the size a UDP answer may have without EDNS (RFC 1035 §4.2.1). */
export const MAX_UDP_RESPONSE = 512;

/** DnsFormatError is a message that is not a well-formed DNS query (the answer is FORMERR). */
export class DnsFormatError extends Error {
  readonly code = 'TUNA_DNS_FORMAT';
}

/** DnsQuestion is one entry of the question section; `name` is lower-case and ends with a dot. */
export interface DnsQuestion {
  readonly name: string;
  readonly type: number;
  readonly class: number;
}

/** DnsQuery is what a server needs of an incoming message. */
export interface DnsQuery {
  readonly id: number;
  readonly opcode: number;
  readonly isResponse: boolean;
  readonly recursionDesired: boolean;
  readonly checkingDisabled: boolean;
  readonly questionCount: number;
  /** question is the first question, when the message has one that could be read. */
  readonly question: DnsQuestion | undefined;
}

/** DnsRecord is a resource record with its RDATA already encoded. */
export interface DnsRecord {
  readonly name: string;
  readonly type: number;
  readonly class: number;
  readonly ttl: number;
  readonly data: Buffer;
}

/** DnsResponse is what encodeResponse writes. */
export interface DnsResponse {
  readonly id: number;
  readonly opcode: number;
  readonly authoritative: boolean;
  readonly recursionDesired: boolean;
  readonly checkingDisabled: boolean;
  readonly rcode: number;
  readonly question?: DnsQuestion | undefined;
  readonly answers?: readonly DnsRecord[];
  readonly authority?: readonly DnsRecord[];
  readonly additional?: readonly DnsRecord[];
  readonly truncated?: boolean;
}

const HEADER_BYTES = 12;
const MAX_NAME_BYTES = 255;
const MAX_POINTER_JUMPS = 64;

/** readName reads a (possibly compressed) domain name at `offset`; returns it and the offset after it. */
export function readName(message: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let position = offset;
  let next = -1;
  let length = 0;
  for (let jumps = 0; ; ) {
    if (position >= message.length) throw new DnsFormatError('name runs past the end of the message');
    const size = message[position] ?? 0;
    if (size === 0) {
      if (next < 0) next = position + 1;
      break;
    }
    if ((size & 0xc0) === 0xc0) {
      if (position + 1 >= message.length) throw new DnsFormatError('compression pointer runs past the end of the message');
      if (++jumps > MAX_POINTER_JUMPS) throw new DnsFormatError('too many compression pointers (a loop?)');
      if (next < 0) next = position + 2;
      position = ((size & 0x3f) << 8) | (message[position + 1] ?? 0);
      continue;
    }
    if ((size & 0xc0) !== 0) throw new DnsFormatError(`unknown label type 0x${size.toString(16)}`);
    if (position + 1 + size > message.length) throw new DnsFormatError('label runs past the end of the message');
    length += size + 1;
    if (length + 1 > MAX_NAME_BYTES) throw new DnsFormatError('name is longer than 255 bytes');
    labels.push(message.toString('latin1', position + 1, position + 1 + size).toLowerCase());
    position += 1 + size;
  }
  return { name: labels.length === 0 ? '.' : `${labels.join('.')}.`, next };
}

/** encodeName writes a domain name without compression ("." is the root). */
export function encodeName(name: string): Buffer {
  const labels = name === '.' ? [] : name.replace(/\.$/, '').split('.');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'latin1');
    if (bytes.length === 0 || bytes.length > 63) throw new DnsFormatError(`label "${label}" of ${name} must be 1 to 63 bytes`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  const encoded = Buffer.concat(parts);
  if (encoded.length > MAX_NAME_BYTES) throw new DnsFormatError(`name ${name} is longer than 255 bytes`);
  return encoded;
}

/** decodeQuery reads the header and the first question; a message shorter than a header throws. */
export function decodeQuery(message: Buffer): DnsQuery {
  if (message.length < HEADER_BYTES) throw new DnsFormatError(`message of ${message.length} bytes is shorter than a DNS header`);
  const flags = message.readUInt16BE(2);
  const questionCount = message.readUInt16BE(4);
  const header = {
    id: message.readUInt16BE(0),
    isResponse: (flags & 0x8000) !== 0,
    opcode: (flags >> 11) & 0x0f,
    recursionDesired: (flags & 0x0100) !== 0,
    checkingDisabled: (flags & 0x0010) !== 0,
    questionCount,
  };
  if (questionCount === 0) return { ...header, question: undefined };
  const { name, next } = readName(message, HEADER_BYTES);
  if (next + 4 > message.length) throw new DnsFormatError('question runs past the end of the message');
  return { ...header, question: { name, type: message.readUInt16BE(next), class: message.readUInt16BE(next + 2) } };
}

/** queryId reads the id of a message too broken to decode, so a FORMERR can still be matched. */
export function queryId(message: Buffer): number | undefined {
  return message.length >= 2 ? message.readUInt16BE(0) : undefined;
}

function encodeRecord(record: DnsRecord): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(record.type, 0);
  fixed.writeUInt16BE(record.class, 2);
  fixed.writeUInt32BE(record.ttl, 4);
  fixed.writeUInt16BE(record.data.length, 8);
  return Buffer.concat([encodeName(record.name), fixed, record.data]);
}

/** encodeResponse writes a response message (QR set, RA clear, names uncompressed). */
export function encodeResponse(response: DnsResponse): Buffer {
  const answers = response.answers ?? [];
  const authority = response.authority ?? [];
  const additional = response.additional ?? [];
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(response.id, 0);
  let flags = 0x8000 | ((response.opcode & 0x0f) << 11) | (response.rcode & 0x0f);
  if (response.authoritative) flags |= 0x0400;
  if (response.truncated) flags |= 0x0200;
  if (response.recursionDesired) flags |= 0x0100;
  if (response.checkingDisabled) flags |= 0x0010;
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(response.question ? 1 : 0, 4);
  header.writeUInt16BE(answers.length, 6);
  header.writeUInt16BE(authority.length, 8);
  header.writeUInt16BE(additional.length, 10);
  const parts: Buffer[] = [header];
  if (response.question) {
    const fixed = Buffer.alloc(4);
    fixed.writeUInt16BE(response.question.type, 0);
    fixed.writeUInt16BE(response.question.class, 2);
    parts.push(encodeName(response.question.name), fixed);
  }
  for (const record of [...answers, ...authority, ...additional]) parts.push(encodeRecord(record));
  return Buffer.concat(parts);
}

/** addressRecord is an A record for an IPv4 address or an AAAA record for an IPv6 one. */
export function addressRecord(name: string, dnsClass: number, ttl: number, address: string): DnsRecord {
  if (net.isIPv4(address)) {
    return { name, type: DNS_TYPE.A, class: dnsClass, ttl, data: Buffer.from(address.split('.').map(Number)) };
  }
  if (!net.isIPv6(address)) throw new Error(`${address} is not an IP address`);
  return { name, type: DNS_TYPE.AAAA, class: dnsClass, ttl, data: ipv6Bytes(address) };
}

/** ipv6Bytes expands an IPv6 address (with :: and an optional dotted IPv4 tail) to 16 bytes. */
export function ipv6Bytes(address: string): Buffer {
  const plain = address.split('%')[0] ?? address;
  const groups: number[] = [];
  const parse = (part: string) => {
    const out: number[] = [];
    for (const piece of part === '' ? [] : part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(piece, 16));
    }
    return out;
  };
  const [head = '', tail] = plain.split('::');
  const headGroups = parse(head);
  const tailGroups = tail === undefined ? [] : parse(tail);
  groups.push(...headGroups, ...new Array<number>(8 - headGroups.length - tailGroups.length).fill(0), ...tailGroups);
  const bytes = Buffer.alloc(16);
  groups.slice(0, 8).forEach((group, index) => bytes.writeUInt16BE(group, index * 2));
  return bytes;
}

/** srvRecord is an SRV record (RFC 2782): priority, weight, port and target. */
export function srvRecord(name: string, dnsClass: number, ttl: number, srv: { priority: number; weight: number; port: number; target: string }): DnsRecord {
  const fixed = Buffer.alloc(6);
  fixed.writeUInt16BE(srv.priority, 0);
  fixed.writeUInt16BE(srv.weight, 2);
  fixed.writeUInt16BE(srv.port, 4);
  return { name, type: DNS_TYPE.SRV, class: dnsClass, ttl, data: Buffer.concat([fixed, encodeName(srv.target)]) };
}

/** encodeQuery writes a one-question query (what a client such as dig sends, without EDNS). */
export function encodeQuery(id: number, name: string, type: number, recursionDesired = true): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(recursionDesired ? 0x0100 : 0, 2);
  header.writeUInt16BE(1, 4);
  const fixed = Buffer.alloc(4);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2); // class IN
  return Buffer.concat([header, encodeName(name.endsWith('.') ? name : `${name}.`), fixed]);
}

/** DecodedResponse is a whole response message, as a client reads it. */
export interface DecodedResponse {
  readonly id: number;
  readonly isResponse: boolean;
  readonly authoritative: boolean;
  readonly truncated: boolean;
  readonly rcode: number;
  readonly questions: readonly DnsQuestion[];
  readonly answers: readonly DnsRecord[];
  readonly authority: readonly DnsRecord[];
  readonly additional: readonly DnsRecord[];
}

/** decodeResponse reads every section of a message (client side: tests and probes). */
export function decodeResponse(message: Buffer): DecodedResponse {
  if (message.length < HEADER_BYTES) throw new DnsFormatError(`message of ${message.length} bytes is shorter than a DNS header`);
  const flags = message.readUInt16BE(2);
  const counts = [4, 6, 8, 10].map((at) => message.readUInt16BE(at));
  let offset = HEADER_BYTES;
  const questions: DnsQuestion[] = [];
  for (let i = 0; i < (counts[0] ?? 0); i++) {
    const { name, next } = readName(message, offset);
    if (next + 4 > message.length) throw new DnsFormatError('question runs past the end of the message');
    questions.push({ name, type: message.readUInt16BE(next), class: message.readUInt16BE(next + 2) });
    offset = next + 4;
  }
  const readRecords = (count: number) => {
    const records: DnsRecord[] = [];
    for (let i = 0; i < count; i++) {
      const { name, next } = readName(message, offset);
      if (next + 10 > message.length) throw new DnsFormatError('record runs past the end of the message');
      const length = message.readUInt16BE(next + 8);
      if (next + 10 + length > message.length) throw new DnsFormatError('record data runs past the end of the message');
      records.push({
        name,
        type: message.readUInt16BE(next),
        class: message.readUInt16BE(next + 2),
        ttl: message.readUInt32BE(next + 4),
        data: message.subarray(next + 10, next + 10 + length),
      });
      offset = next + 10 + length;
    }
    return records;
  };
  const answers = readRecords(counts[1] ?? 0);
  const authority = readRecords(counts[2] ?? 0);
  const additional = readRecords(counts[3] ?? 0);
  return {
    id: message.readUInt16BE(0),
    isResponse: (flags & 0x8000) !== 0,
    authoritative: (flags & 0x0400) !== 0,
    truncated: (flags & 0x0200) !== 0,
    rcode: flags & 0x0f,
    questions,
    answers,
    authority,
    additional,
  };
}
