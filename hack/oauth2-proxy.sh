#!/usr/bin/env bash
# oauth2-proxy.sh: builds oauth2-proxy (the authentication proxy the external authorization e2e
# test puts behind an Ingress's auth-url) from the Go module proxy into the cache outside the
# repository, keyed by version. Prints TUNA_OAUTH2_PROXY_BIN=... on stdout; progress goes to stderr.
set -euo pipefail
# shellcheck source=lib/go-tools.sh
source "$(dirname "$0")/lib/go-tools.sh"
TUNA_OAUTH2_PROXY_VERSION="${TUNA_OAUTH2_PROXY_VERSION:-7.15.6}"
dir="$TUNA_CACHE/oauth2-proxy-v$TUNA_OAUTH2_PROXY_VERSION"
go_build_tools github.com/oauth2-proxy/oauth2-proxy/v7 "v$TUNA_OAUTH2_PROXY_VERSION" "$dir" "oauth2-proxy=."
echo "TUNA_OAUTH2_PROXY_BIN=$dir/oauth2-proxy"
