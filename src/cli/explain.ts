/**
 * explainError turns the failures a user causes or can fix (wrong edge address, refused key,
 * unreachable edge) into one clear sentence with what to check. Errors are recognised by their
 * stable `code`, never by message text.
 */
export function explainError(err: unknown): { message: string; exitCode: number } | undefined {
  if (!err || typeof err !== 'object' || !('code' in err) || typeof err.code !== 'string') return undefined;
  const message = err instanceof Error ? err.message : String(err);
  switch (err.code) {
    case 'TUNA_EDGE_UNREACHABLE':
      return { message: `${message}; check --edge (HOST:PORT of the edge's tunnel listener) and that the edge runs`, exitCode: 69 };
    case 'TUNA_TUNNEL_REFUSED': {
      const status = 'statusCode' in err ? Number(err.statusCode) : 0;
      const hint =
        status === 401 || status === 403
          ? 'the key is wrong, expired, revoked, or not valid for this binding; check --key and the binding/hostname'
          : status === 429
            ? 'the key has reached its connection limit'
            : 'see the edge log';
      return { message: `${message}; ${hint}`, exitCode: 77 };
    }
    case 'TUNA_TUNNEL_TIMEOUT':
      return { message: `${message}; is --edge the edge's tunnel listener (not its public port)?`, exitCode: 69 };
    case 'TUNA_TUNNEL_PROTOCOL':
      return { message: `${message}; is --edge a tuna edge's tunnel listener?`, exitCode: 69 };
    case 'TUNA_EDGE_CONFIG':
    case 'TUNA_EDGE_LISTEN':
      return { message, exitCode: 78 };
    default:
      return undefined;
  }
}
