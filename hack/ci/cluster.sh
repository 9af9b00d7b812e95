#!/usr/bin/env bash
# ci/cluster.sh: the cluster tier for CI (called by .ci/run). Installs the Debian tools the test
# cluster uses, builds the control plane from Go modules unless cached, reports the cold build and
# warm start times, then runs `npm run test:cluster` (which ends by checking that cluster:down left
# nothing behind).
set -euo pipefail
cd "$(dirname "$0")/../.."
export TUNA_CACHE="${TUNA_CACHE:-$HOME/.cache/tuna}"

need=()
for tool in ip:iproute2 openssl:openssl curl:curl setsid:util-linux mount:mount; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
if ((${#need[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v go >/dev/null || { echo "ci/cluster.sh: Go is required to build the control plane" >&2; exit 1; }

t0=$(date +%s)
hack/cluster/build.sh >/dev/null
t1=$(date +%s)
echo "cluster tier: build $(( t1 - t0 ))s (a cold build when nothing was cached under $TUNA_CACHE)"

# Warm start: binaries cached, nothing running; up.sh's own "warm start" line is the figure.
hack/cluster/down.sh 2>/dev/null || true
hack/cluster/up.sh >/dev/null
hack/cluster/down.sh
echo "cluster tier: warm start measured above (cluster: cluster ready: warm start ...)"

npm run test:cluster
