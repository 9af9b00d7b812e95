/**
 * formatTable renders rows as columns aligned with spaces, headers first (as `kubectl get` does):
 * each column as wide as its widest cell, two spaces between columns, no trailing spaces. Empty
 * cells print as `-` so every row has the same number of words for `awk`.
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows.map((row) => headers.map((_, i) => (row[i] === undefined || row[i] === '' ? '-' : row[i]!)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** formatLabels prints labels as `k=v,k2=v2`, sorted by key so output is stable. */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]!}`)
    .join(',');
}

/** formatTime prints milliseconds since the epoch as an ISO 8601 UTC time to the second. */
export function formatTime(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
