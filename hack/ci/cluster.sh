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

# Node 24 and the npm packages first, so their one-time install is not counted as cluster start.
# shellcheck source=../node24.sh
source hack/node24.sh

source hack/cluster/versions.sh
kind="warm (cached)"
[[ -x "$TUNA_K8S_DIR/bin/kube-apiserver" && -x "$TUNA_ETCD_DIR/bin/etcd" && -x "$TUNA_ECHO_DIR/bin/echo-basic" ]] || kind="cold"
t0=$(date +%s)
hack/cluster/build.sh >/dev/null
hack/podinfo.sh >/dev/null   # podinfo and podcli from their Go module (test/cluster/helm-install.test.ts)
echo "cluster tier: $kind build of Kubernetes v$TUNA_K8S_VERSION, etcd v$TUNA_ETCD_VERSION, echo-basic v$TUNA_GATEWAY_API_VERSION: $(( $(date +%s) - t0 ))s"

# Warm start: binaries cached, nothing running, until the node is Ready and pods can be created.
hack/cluster/down.sh 2>/dev/null || true
t0=$(( $(date +%s%N) / 1000000 ))
hack/cluster/up.sh >/dev/null
ms=$(( $(date +%s%N) / 1000000 - t0 ))
hack/cluster/down.sh
echo "cluster tier: warm start to ready: $(( ms / 1000 )).$(( ms % 1000 / 100 ))s"

npm run test:cluster
