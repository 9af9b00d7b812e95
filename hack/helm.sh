#!/usr/bin/env bash
# helm.sh: builds Helm v3 (helm lint / template / install of charts/tuna in the tests) from the Go
# module proxy into the cache outside the repository, keyed by version.
# Prints TUNA_HELM_BIN=... on stdout; progress goes to stderr.
set -euo pipefail
# shellcheck source=lib/go-tools.sh
source "$(dirname "$0")/lib/go-tools.sh"
TUNA_HELM_VERSION="${TUNA_HELM_VERSION:-3.22.0}"
dir="$TUNA_CACHE/helm-v$TUNA_HELM_VERSION"
# helm reports its version from these variables (a module build has no git metadata).
go_build_tools helm.sh/helm/v3 "v$TUNA_HELM_VERSION" "$dir" \
  "helm=./cmd/helm=-X helm.sh/helm/v3/internal/version.version=v$TUNA_HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
echo "TUNA_HELM_BIN=$dir/helm"
