/**
 * IP addresses and CIDR ranges as 16 bytes, IPv4 mapped into IPv6 (`::ffff:a.b.c.d`, RFC 4291
 * §2.5.5.2), so that one comparison serves both families and a client address the edge reports
 * as `::ffff:127.0.0.1` (a dual-stack listener) matches `127.0.0.0/8`. Pure code: the route
 * graph validates ranges with it and the data plane matches with it.
 */

/** IpRange is a parsed CIDR: the network's 16 bytes and the prefix length on the 128-bit scale. */
export interface IpRange {
  bytes: Uint8Array;
  /** prefix length in bits of the 128-bit form (an IPv4 /8 is 104) */
  prefix: number;
}

/** parseIpAddress reads an IPv4 or IPv6 literal (no brackets, no zone); undefined if malformed. */
export function parseIpAddress(text: string): Uint8Array | undefined {
  if (text.includes(':')) return parseIpv6(text);
  const v4 = parseIpv4(text);
  if (v4 === undefined) return undefined;
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  out.set(v4, 12);
  return out;
}

/** parseCidr reads `ADDRESS/PREFIX` or a bare address (a single host); undefined if malformed. */
export function parseCidr(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const bytes = parseIpAddress(addressText);
  if (bytes === undefined) return undefined;
  const isV4 = !addressText.includes(':');
  const max = isV4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > max) return undefined;
    prefix = Number(p);
  }
  return { bytes, prefix: isV4 ? prefix + 96 : prefix };
}

/** isInRange says whether a parsed address lies in a parsed range. */
export function isInRange(address: Uint8Array, range: IpRange): boolean {
  const whole = range.prefix >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== range.bytes[i]) return false;
  const bits = range.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((address[whole] ?? 0) & mask) === ((range.bytes[whole] ?? 0) & mask);
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    // Leading zeros are refused: `010` is octal to some parsers and decimal to others.
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const words: number[] = [];
  const push = (list: string[], isLast: boolean): boolean => {
    for (let i = 0; i < list.length; i++) {
      const g = list[i]!;
      if (isLast && i === list.length - 1 && g.includes('.')) {
        const v4 = parseIpv4(g);
        if (v4 === undefined) return false;
        words.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return false;
      words.push(parseInt(g, 16));
    }
    return true;
  };
  if (!push(head, halves.length === 1)) return undefined;
  const headWords = words.length;
  if (!push(tail, true)) return undefined;
  const tailWords = words.splice(headWords);
  const missing = 8 - headWords - tailWords.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...words, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tailWords];
  const out = new Uint8Array(16);
  all.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}
