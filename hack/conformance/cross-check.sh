#!/usr/bin/env bash
# cross-check.sh SUITE_LOG REPORT.yaml: checks that the conformance report says what the suite's own
# `go test -v` output says, test by test, and exits 1 (naming each disagreement) if not.
#
# Why: suite v1.6.0 and v1.6.1 write the report when their loop over the tests returns, and a
# parallel test has only paused then (t.Parallel), so the report counts it as passed before it ran;
# if it then fails or skips itself, only go test knows (hack/conformance/release.sh). So, for each
# top-level subtest of TestConformance in the log:
#   - one that started has a result line (--- PASS, FAIL or SKIP);
#   - one that FAILed is among the report's failedTests;
#   - one that was SKIPped is either one the suite skips before running it, which the report never
#     counts as passed ("Skipping NAME: suite does not support ..." or "... test explicitly
#     skipped"), or among the report's skippedTests;
#   - one that PASSed is not among the report's failed or skipped tests.
# A test the report counts as passed is one the suite started without skipping it first, so each of
# those PASSed in go test when this check passes.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# == 2 ]] || { echo "usage: $0 SUITE_LOG REPORT.yaml" >&2; exit 2; }
hack/node24.sh node -e '
const fs = require("node:fs");
const { parse } = require("yaml");
const [logFile, reportFile] = process.argv.slice(1);
const log = fs.readFileSync(logFile, "utf8").split("\n");
const report = parse(fs.readFileSync(reportFile, "utf8"));
const started = new Set(), results = new Map(), skippedBeforeRun = new Set();
for (const line of log) {
  let m;
  if ((m = /^=== RUN\s+TestConformance\/([^/\s]+)\s*$/.exec(line))) started.add(m[1]);
  if ((m = /^\s*--- (PASS|FAIL|SKIP): TestConformance\/([^/\s]+) \(/.exec(line))) results.set(m[2], m[1]);
  if ((m = /Skipping (\S+): (suite does not support|test explicitly skipped)/.exec(line))) skippedBeforeRun.add(m[1]);
}
const failed = new Set(), skipped = new Set();
for (const p of report.profiles ?? []) {
  for (const part of [p.core, p.extended]) {
    for (const t of part?.failedTests ?? []) failed.add(t);
    for (const t of part?.skippedTests ?? []) skipped.add(t);
  }
}
const problems = [];
if (results.size === 0) problems.push("no results of TestConformance subtests in the log");
for (const name of started) if (!results.has(name)) problems.push(`${name} started but has no result line`);
for (const [name, result] of [...results].sort()) {
  if (result === "FAIL" && !failed.has(name)) problems.push(`${name} FAILed in go test; the report does not count it failed`);
  if (result === "SKIP" && !skippedBeforeRun.has(name) && !skipped.has(name))
    problems.push(`${name} skipped itself while running; the report does not count it skipped`);
  if (result === "PASS" && (failed.has(name) || skipped.has(name))) problems.push(`${name} PASSed in go test; the report counts it failed or skipped`);
}
const count = (r) => [...results.values()].filter((v) => v === r).length;
if (problems.length > 0) {
  for (const p of problems) console.error(`cross-check: ${p}`);
  console.error(`cross-check: the report (${reportFile}) disagrees with go test (${logFile})`);
  process.exit(1);
}
console.error(`cross-check: go test passed ${count("PASS")}, failed ${count("FAIL")}, skipped ${count("SKIP")} of the suite tests; the report agrees`);
' "$1" "$2"
