#!/usr/bin/env bash
# up.sh: starts the test cluster (etcd, kube-apiserver, kube-controller-manager, our kubelet) on
# 127.0.0.1, with an image registry (crane registry serve) on 127.0.0.1:$TUNA_REGISTRY_PORT, building
# the binaries first if they are not cached. Idempotent: a running, ready cluster is left alone.
# Prints `export KUBECONFIG=... TUNA_REGISTRY=127.0.0.1:PORT TUNA_CLUSTER_STARTED=0|1` on stdout;
# progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
source hack/cluster/env.sh
started_ms=$(( $(date +%s%N) / 1000000 ))
log() { echo "cluster: $*" >&2; }
elapsed() { local ms=$(( $(date +%s%N) / 1000000 - started_ms )); printf '%d.%d' $(( ms / 1000 )) $(( ms % 1000 / 100 )); }
run_dir="$TUNA_CLUSTER_DIR/run" logs="$TUNA_CLUSTER_DIR/logs"

# api_get PATH: GET from the apiserver as admin (never prints credentials).
api_get() {
  curl -sf --max-time 5 --cacert "$TUNA_CLUSTER_DIR/ca.crt" --cert "$TUNA_CLUSTER_DIR/admin.crt" \
    --key "$TUNA_CLUSTER_DIR/admin.key" "$TUNA_APISERVER_URL$1"
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.5 s; fails after SECONDS, or at once when a
# component has died (its log tail goes to stderr).
wait_for() {
  local what="$1" limit="$2"; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@" >/dev/null 2>&1; do
    for c in "${TUNA_COMPONENTS[@]}"; do
      if [[ -f "$run_dir/$c.pid" ]] && ! kill -0 "$(cat "$run_dir/$c.pid")" 2>/dev/null; then
        log "$c exited while waiting for $what"; exit 1
      fi
    done
    if (( $(date +%s) > deadline )); then log "timed out waiting for $what"; exit 1; fi
    sleep 0.5
  done
}

# start NAME COMMAND...: runs COMMAND in its own session, logging to logs/NAME.log, pid in run/NAME.pid.
start() {
  local name="$1"; shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run_dir/$name.pid"
}

# is_alive NAME: the component's process is running.
is_alive() { [[ -f "$run_dir/$1.pid" ]] && kill -0 "$(cat "$run_dir/$1.pid")" 2>/dev/null; }
if is_alive kubelet && is_alive registry && api_get /readyz >/dev/null 2>&1; then
  log "already running"
  echo "export KUBECONFIG=$TUNA_CLUSTER_DIR/admin.kubeconfig TUNA_REGISTRY=$TUNA_REGISTRY TUNA_CLUSTER_STARTED=0"
  exit 0
fi
hack/cluster/down.sh >/dev/null 2>&1 || true   # a half-started or crashed cluster: clean first

# A start that fails half-way shows the components' last log lines, then leaves nothing running.
is_ready=0
on_exit() {
  [[ $is_ready == 1 ]] && return
  for f in "$logs"/*.log; do [[ -f "$f" ]] && { log "--- last lines of $(basename "$f")"; tail -15 "$f" >&2; }; done
  hack/cluster/down.sh >/dev/null 2>&1 || true
}
trap on_exit EXIT

build_started=$(date +%s)
hack/cluster/build.sh >/dev/null
TUNA_K8S_BIN="$TUNA_K8S_DIR/bin" TUNA_ETCD_BIN="$TUNA_ETCD_DIR/bin" TUNA_ECHO_BIN="$TUNA_ECHO_DIR/bin"
eval "$(hack/crane.sh)"   # TUNA_CRANE_BIN: the registry, and the kubelet's image pulls
log "binaries ready ($(( $(date +%s) - build_started ))s; cached under $TUNA_CACHE)"
started_ms=$(( $(date +%s%N) / 1000000 ))   # warm start time counts from here

mkdir -p "$run_dir" "$logs"
chmod 700 "$TUNA_CLUSTER_DIR"
TUNA_NODE_NAME="$TUNA_NODE_NAME" hack/cluster/certs.sh "$TUNA_CLUSTER_DIR"
for name in admin controller-manager kubelet binder; do
  hack/cluster/kubeconfig.sh "$TUNA_CLUSTER_DIR" "$TUNA_APISERVER_URL" "$name"
done
d="$TUNA_CLUSTER_DIR"

# The image registry: plain HTTP on loopback (crane treats 127.0.0.1 registries as insecure).
mkdir -p "$d/registry"
start registry "$TUNA_CRANE_BIN" registry serve --address "$TUNA_REGISTRY" --disk "$d/registry"

# --unsafe-no-fsync: a throwaway test store; fsync on every write only slows tests down.
start etcd "$TUNA_ETCD_BIN/etcd" --name tuna --data-dir "$d/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$TUNA_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$TUNA_ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$TUNA_ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$TUNA_ETCD_PEER_PORT" \
  --initial-cluster "tuna=http://127.0.0.1:$TUNA_ETCD_PEER_PORT" --listen-metrics-urls ""

# Admission: the defaults a real cluster has (ValidatingAdmissionPolicy, ServiceAccount, PodSecurity,
# webhooks...) plus NodeRestriction, which kubeadm enables, so our kubelet is held to a node's rights.
start kube-apiserver "$TUNA_K8S_BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$TUNA_ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$TUNA_APISERVER_PORT" \
  --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" --client-ca-file "$d/ca.crt" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
  --service-cluster-ip-range "$TUNA_SERVICE_CIDR" \
  --authorization-mode Node,RBAC \
  --enable-admission-plugins NodeRestriction,ValidatingAdmissionPolicy,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
  --kubelet-client-certificate "$d/apiserver-kubelet-client.crt" --kubelet-client-key "$d/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "$d/ca.crt" --kubelet-preferred-address-types InternalIP \
  --allow-privileged=true --profiling=false --v=1 \
  --endpoint-reconciler-type none   # it refuses a loopback address in the `kubernetes` endpoints

# The kubelet starts beside the apiserver (it retries until the apiserver answers): Node.js and
# the TypeScript loader start in the seconds the apiserver needs anyway.
start kubelet env TUNA_CLUSTER_DIR="$d" TUNA_ECHO_BIN="$TUNA_ECHO_BIN" TUNA_NODE_NAME="$TUNA_NODE_NAME" \
  TUNA_KUBELET_PORT="$TUNA_KUBELET_PORT" TUNA_K8S_VERSION="$TUNA_K8S_VERSION" \
  TUNA_CRANE_BIN="$TUNA_CRANE_BIN" TUNA_REGISTRY="$TUNA_REGISTRY" \
  TUNA_KUBERNETES_SERVICE="$TUNA_KUBERNETES_SERVICE_IP:443" TUNA_APISERVER="127.0.0.1:$TUNA_APISERVER_PORT" \
  hack/node24.sh node --import tsx "$PWD/test/support/kubelet/main.ts"

wait_for "apiserver /readyz" 90 api_get /readyz
wait_for "registry on $TUNA_REGISTRY" 30 curl -sf --max-time 2 "http://$TUNA_REGISTRY/v2/"
log "apiserver ready ($(elapsed)s)"

start kube-controller-manager "$TUNA_K8S_BIN/kube-controller-manager" \
  --kubeconfig "$d/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$d/controller-manager.kubeconfig" --authorization-kubeconfig "$d/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false \
  --controllers deployment-controller,replicaset-controller,job-controller,endpointslice-controller,endpoints-controller,serviceaccount-controller,serviceaccount-token-controller,namespace-controller,garbage-collector-controller,root-ca-certificate-publisher-controller \
  --use-service-account-credentials=true \
  --service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" \
  --service-cluster-ip-range "$TUNA_SERVICE_CIDR" --profiling=false --v=1

node_ready() {
  [[ "$("$TUNA_K8S_BIN/kubectl" --kubeconfig "$d/admin.kubeconfig" get node "$TUNA_NODE_NAME" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}
wait_for "node $TUNA_NODE_NAME Ready" 60 node_ready
# Pods need the namespace's default ServiceAccount (ServiceAccount admission) and kube-root-ca.crt.
wait_for "default ServiceAccount" 60 api_get /api/v1/namespaces/default/serviceaccounts/default
wait_for "kube-root-ca.crt" 60 api_get /api/v1/namespaces/default/configmaps/kube-root-ca.crt
is_ready=1
log "cluster ready: warm start $(elapsed)s (Kubernetes v$TUNA_K8S_VERSION, etcd v$TUNA_ETCD_VERSION)"
echo "export KUBECONFIG=$d/admin.kubeconfig TUNA_REGISTRY=$TUNA_REGISTRY TUNA_CLUSTER_STARTED=1"
