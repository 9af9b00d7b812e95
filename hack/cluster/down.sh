#!/usr/bin/env bash
# down.sh: stops the test cluster started by up.sh and removes everything it made: processes (by
# their pid files), the kubelet's network namespaces, veths and bridge, and the state directory.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source hack/cluster/env.sh
run_dir="$TUNA_CLUSTER_DIR/run"
log() { echo "cluster: $*" >&2; }

# stop NAME: SIGTERM, up to 20 s for a clean exit (the kubelet stops its pods), then SIGKILL.
stop() {
  local file="$run_dir/$1.pid" pid
  [[ -f "$file" ]] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 80); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && { log "$1 did not stop; killing it"; kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"; }
  fi
  rm -f "$file"
}

# The kubelet first (it stops its pods), then controller-manager and apiserver together, etcd last:
# an apiserver whose etcd is gone waits for it instead of shutting down.
stop kubelet
stop kube-controller-manager & stop kube-apiserver & wait
stop etcd
stop registry

# A kubelet that was killed cannot clean up: remove what it would have (its names are its own).
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^tuna-kubelet-'); do
  for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  ip netns del "$ns" 2>/dev/null
done
for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^tk-'); do
  ip link del "$link" 2>/dev/null
done
rm -rf "$TUNA_CLUSTER_DIR"
log "stopped"
