#!/usr/bin/env bash
# crane.sh: builds go-containerregistry's `crane` from the Go module proxy into the cache outside the
# repository, keyed by version. crane assembles, pushes and reads OCI images without a Docker engine
# (hack/image.sh), and `crane registry serve --address 127.0.0.1:0` is an in-memory OCI registry on
# loopback (hack/image.sh assembles in one; the image tests push to and pull from one).
# Prints TUNA_CRANE_BIN=... on stdout; progress goes to stderr.
set -euo pipefail
# shellcheck source=lib/go-tools.sh
source "$(dirname "$0")/lib/go-tools.sh"
TUNA_CRANE_VERSION="${TUNA_CRANE_VERSION:-0.22.1}"
dir="$TUNA_CACHE/go-containerregistry-v$TUNA_CRANE_VERSION"
go_build_tools github.com/google/go-containerregistry "v$TUNA_CRANE_VERSION" "$dir" \
  crane=./cmd/crane
echo "TUNA_CRANE_BIN=$dir/crane"
