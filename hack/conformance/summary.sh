#!/usr/bin/env bash
# summary.sh REPORT.yaml: prints a conformance report as one line per profile (core, then extended):
# result, passed/failed/skipped counts and the failed and skipped test names.
set -euo pipefail
cd "$(dirname "$0")/../.."
hack/node24.sh node -e '
const { parse } = require("yaml");
const report = parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
const line = (name, part, s) => {
  const st = s.statistics ?? {};
  console.log(`${name} ${part}: ${s.result} (passed ${st.Passed ?? 0}, failed ${st.Failed ?? 0}, skipped ${st.Skipped ?? 0})`);
  for (const t of s.failedTests ?? []) console.log(`  failed: ${t}`);
  for (const t of s.skippedTests ?? []) console.log(`  skipped: ${t}`);
};
console.log(`Gateway API ${report.gatewayAPIVersion} (${report.gatewayAPIChannel}), ${report.implementation.project} ${report.implementation.version}, ${report.date}`);
for (const p of report.profiles ?? []) {
  line(p.name, "core", p.core);
  if (p.extended) {
    line(p.name, "extended", p.extended);
    if ((p.extended.unsupportedFeatures ?? []).length > 0) console.log(`  not supported: ${p.extended.unsupportedFeatures.join(", ")}`);
  }
}' "$1"
