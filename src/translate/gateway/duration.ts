/**
 * GEP-2257 Gateway API Duration: one to four `<1-5 digits><unit>` parts, units h, m, s, ms
 * (`1h30m`, `500ms`, `0s`). Anything else (fractions, `us`, signs, spaces) is invalid.
 */
const whole = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const part = /([0-9]{1,5})(ms|h|m|s)/g;
const unitMs: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** parseDuration returns the duration in milliseconds, or undefined if it is not a GEP-2257 duration. */
export function parseDuration(text: string): number | undefined {
  if (!whole.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(part)) total += Number(m[1]) * (unitMs[m[2] ?? ''] ?? 0);
  return total;
}
