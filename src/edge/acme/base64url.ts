/** base64url encodes bytes or a string without padding (RFC 7515 §2, RFC 4648 §5). */
export function base64url(value: Buffer | string): string {
  return (typeof value === 'string' ? Buffer.from(value, 'utf8') : value).toString('base64url');
}
