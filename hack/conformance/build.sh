#!/usr/bin/env bash
# build.sh: builds the official Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance at
# $TUNA_CONFORMANCE_SUITE_VERSION, by default $TUNA_GATEWAY_API_VERSION) as one test binary, from the
# Go module proxy, into a cache outside the repository keyed by version. A finished build is reused.
# Prints TUNA_CONFORMANCE_BIN=<path> on stdout; progress goes to stderr.
#
# Why a wrapper module: the suite is a library with a TestConformance of its own in a _test file,
# which `go test -c` of a dependency cannot reach; our one-line test calls conformance.RunConformance,
# so every flag of the upstream suite (-gateway-class, -supported-features, -run-test, -report-output,
# the report metadata...) works unchanged.
set -euo pipefail
# shellcheck source=../cluster/versions.sh
source "$(dirname "$0")/../cluster/versions.sh"
version="${TUNA_CONFORMANCE_SUITE_VERSION:-$TUNA_GATEWAY_API_VERSION}"
dir="$TUNA_CACHE/conformance-v$version"
bin="$dir/bin/conformance.test"
log() { echo "conformance build: $*" >&2; }
if [[ ! -x "$bin" ]]; then
  mkdir -p "$dir/src" "$dir/bin"
  cat >"$dir/src/go.mod" <<MOD
module tuna.test/conformance-run

go 1.26.0

require sigs.k8s.io/gateway-api/conformance v$version

// The suite's own go.mod replaces the API module with its parent directory (one repository); a
// replace of a dependency is ignored, so we name the published API module of the same release.
replace sigs.k8s.io/gateway-api => sigs.k8s.io/gateway-api v$version
MOD
  cat >"$dir/src/conformance_test.go" <<'GO'
package conformancerun

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

func TestConformance(t *testing.T) { conformance.RunConformance(t) }
GO
  log "go test -c sigs.k8s.io/gateway-api/conformance v$version (about 3 min cold on 2 cores)"
  started=$(date +%s)
  (cd "$dir/src" && GOFLAGS="-trimpath -mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 \
    GOPROXY="${GOPROXY:-https://proxy.golang.org}" go test -c -o "$bin.tmp" .)
  mv "$bin.tmp" "$bin"
  log "built in $(( $(date +%s) - started ))s"
fi
echo "TUNA_CONFORMANCE_BIN=$bin"
