#!/usr/bin/env bash
# conformance.sh [-suite-version X.Y.Z] [-run-test NAME] [-profiles P,...] [-data-plane Shared|Dedicated] [-publish] [-- extra suite flags]:
# runs the official Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance, the release
# in hack/cluster/versions.sh unless -suite-version names another) against tuna on the local test
# cluster, as docs/conformance.md describes:
#
#   1. builds the suite into the cache (hack/conformance/build.sh) and brings the cluster up;
#   2. installs the experimental-channel CRDs of the same release (bundle versions match: no
#      -allow-crds-mismatch);
#   3. starts a store-mode `tuna edge` whose address pool is 127.77.0.0/16, each address serving the
#      ports its Gateway's listeners ask for (addressPortRange 1-65535), and a seeded account with a
#      reservations-scoped key for the operator;
#   4. creates GatewayClass `tuna` and runs `tuna operator` against the cluster;
#   5. runs the suite with -gateway-class tuna, the features tuna's GatewayClass advertises
#      (read back from its status.supportedFeatures) and the report metadata, writing the report to
#      $TUNA_CONFORMANCE_OUT (default: a temp dir; docs/conformance/ keeps the published one);
#   6. checks the report against the suite's go test output (hack/conformance/cross-check.sh), tears
#      down what it started and prints the result per profile; with -publish, copies the report to
#      docs/conformance/reports/v<minor>/tuna/<channel>-v<version>-default-report.yaml
#      (…-default-suite-v<suite>-report.yaml for a release other than the default).
#
# -suite-version X.Y.Z ($TUNA_CONFORMANCE_SUITE_VERSION): another release of the suite, one that
# hack/conformance/release.sh knows (feature names, report quirks); built and cached per version.
# The cluster's echo-basic stays the default release's (the base manifests are the same).
#
# -data-plane Dedicated ($TUNA_CONFORMANCE_DATA_PLANE): the GatewayClass names GatewayParameters with
# dataPlane: Dedicated, so every Gateway of the suite is served by pods of its own
# (docs/dedicated-data-plane.md): the operator image is built and pushed to the cluster's registry,
# the edge's tunnel listener is on the pods' bridge (198.18.0.1, in its certificate's SAN) instead
# of loopback, config/rbac is applied for the data planes' ClusterRole, and the operator is given
# --data-plane-image. Default: Shared (the operator's own process serves every Gateway).
#
# Profiles: GATEWAY-HTTP, GATEWAY-GRPC, GATEWAY-TLS, GATEWAY-TCP and GATEWAY-UDP by default (the
# UDPRoute tests: DNS to the coredns stand-in and echo-basic's UDP echo, through UDP ports of each
# Gateway's address).
#
# Exit status: the suite's (0 = every test it ran passed), or 1 if the report disagrees with the go
# test output. Progress goes to stderr; the per-profile summary to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
source hack/cluster/env.sh
log() { echo "conformance: $*" >&2; }

source hack/conformance/release.sh
run_test="" profiles="GATEWAY-HTTP,GATEWAY-GRPC,GATEWAY-TLS,GATEWAY-TCP,GATEWAY-UDP" publish=0 extra=()
data_plane="${TUNA_CONFORMANCE_DATA_PLANE:-Shared}"
suite_version="${TUNA_CONFORMANCE_SUITE_VERSION:-$TUNA_GATEWAY_API_VERSION}"
while (( $# > 0 )); do
  case "$1" in
    -suite-version|--suite-version) suite_version="$2"; shift 2 ;;
    -run-test|--run-test) run_test="$2"; shift 2 ;;
    -profiles|--profiles) profiles="$2"; shift 2 ;;
    -data-plane|--data-plane) data_plane="$2"; shift 2 ;;
    -publish|--publish) publish=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "conformance: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

[[ "$data_plane" == Shared || "$data_plane" == Dedicated ]] || { echo "conformance: -data-plane is Shared or Dedicated, not $data_plane" >&2; exit 2; }
suite_release_known "$suite_version" ||
  { echo "conformance: -suite-version is one of ${TUNA_SUITE_RELEASES[*]} (hack/conformance/release.sh), not $suite_version" >&2; exit 2; }
export TUNA_CONFORMANCE_SUITE_VERSION="$suite_version"

# TUNA_CONFORMANCE_BIN: a suite binary of your own (for example one with extra logging); else ours.
[[ -n "${TUNA_CONFORMANCE_BIN:-}" ]] || eval "$(hack/conformance/build.sh)"
work="$(mktemp -d)"
out="${TUNA_CONFORMANCE_OUT:-$work/out}"
mkdir -p "$out"
pids=()
cluster_started=0 crds_installed=0
cleanup() {
  local status=$?
  # What the edge and the operator counted (UDP drops by reason among it), kept beside their logs.
  if [[ -n "${metrics_port:-}" ]]; then
    curl -s -m 5 "http://127.0.0.1:$metrics_port/metrics" >"$out/edge-metrics.txt" 2>/dev/null || true
    curl -s -m 5 "http://127.0.0.1:$health_port/metrics" >"$out/operator-metrics.txt" 2>/dev/null || true
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # the Gateways' own pods would go on dialing an edge that is gone
  if [[ $data_plane == Dedicated && -n "${kubectl:-}" ]]; then
    "$kubectl" get pods -A -l tuna.dev/data-plane=true -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{"\n"}{end}' 2>/dev/null |
      while read -r ns pod; do "$kubectl" logs -n "$ns" "$pod" --tail 50 --prefix 2>&1 | cut -c1-400; done >"$out/data-planes.log" || true
    "$kubectl" delete deployments,secrets,serviceaccounts -A -l tuna.dev/data-plane=true --wait=false >/dev/null 2>&1 || true
    "$kubectl" delete clusterrolebindings -l tuna.dev/data-plane=true --wait=false >/dev/null 2>&1 || true
  fi
  if [[ $cluster_started == 1 && -z "${TUNA_CONFORMANCE_KEEP_CLUSTER:-}" ]]; then
    hack/cluster/down.sh >/dev/null 2>&1 || true
  elif [[ $crds_installed == 1 && $suite_version != "$TUNA_GATEWAY_API_VERSION" ]]; then
    # a cluster that stays up gets the default release's CRDs back, the ones the other tests expect
    hack/gateway-api-crds.sh experimental >/dev/null 2>&1 || true
  fi
  log "logs and report in $out"
  exit "$status"
}
trap cleanup EXIT

eval "$(hack/cluster/up.sh)"   # KUBECONFIG, TUNA_CLUSTER_STARTED
cluster_started=$TUNA_CLUSTER_STARTED
export KUBECONFIG
kubectl="$TUNA_K8S_DIR/bin/kubectl"
crds_installed=1
TUNA_GATEWAY_API_VERSION="$suite_version" hack/gateway-api-crds.sh experimental >/dev/null

# The edge: tunnel listener on loopback with a throwaway certificate, Gateway addresses from
# 127.77.0.0/16. Each address serves the ports its Gateway's listeners name (the operator asks for
# them), any of addressPortRange: binding any port of a loopback address disturbs nothing. HTTPS and
# TLS listeners are raw TLS at the edge (terminated or passed through in the cluster, never at the
# edge); addressPorts is the default list (HTTP 80/8080/8090, raw TLS 443/8443) of an address whose
# reservation names none. UDP flow limits: every suite probe is a new client socket (a new flow)
# from 127.0.0.1, and UDPRouteWeightedRouting sends 500 of them in seconds, past the default 64
# flows per client address held 60 s (DEFAULT_UDP_LIMITS), so the flows it left open made later
# probes time out; flows are freed after 10 s here.
# With -data-plane Dedicated the Gateways' pods dial the tunnel listener too: it is on the pods' bridge.
tunnel_host=127.0.0.1
[[ $data_plane == Dedicated ]] && tunnel_host=198.18.0.1
tunnel_port="${TUNA_CONFORMANCE_TUNNEL_PORT:-17443}" http_port="${TUNA_CONFORMANCE_HTTP_PORT:-18180}"
metrics_port="${TUNA_CONFORMANCE_METRICS_PORT:-18181}" health_port="${TUNA_CONFORMANCE_HEALTH_PORT:-18182}"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:$tunnel_host" -keyout "$work/tunnel.key" -out "$work/tunnel.crt" 2>/dev/null
cat >"$work/edge.yaml" <<EOF
listen:
  tunnel: { host: $tunnel_host, port: $tunnel_port, tls: { certFile: $work/tunnel.crt, keyFile: $work/tunnel.key } }
  http: { host: 127.0.0.1, port: $http_port }
  metrics: { host: 127.0.0.1, port: $metrics_port }
store:
  url: $work/edge.db
  baseDomain: tuna.localhost
  addressPool: 127.77.0.0/16
  addressPortRange: { first: 1, last: 65535 }
  addressPorts:
    - { port: 80, protocol: http }
    - { port: 8080, protocol: http }
    - { port: 8090, protocol: http }
    - { port: 443, protocol: tls }
    - { port: 8443, protocol: tls }
limits:
  udp: { idleTimeoutMs: 10000, maxFlowsPerAddress: 4096, maxFlowsPerBinding: 4096 }
EOF
# tuna runs the compiled CLI. The long-running ones below start hack/node24.sh directly in the
# background, so $! is the Node process itself (node24.sh execs) and the cleanup's kill reaches it.
tuna() { hack/node24.sh node dist/cli/main.js "$@"; }
npm run --silent build >&2
export TUNA_API_KEY TUNA_EDGE="$tunnel_host:$tunnel_port"
TUNA_API_KEY="$(tuna edge init --store "$work/edge.db" | tail -n 1)"
hack/node24.sh node dist/cli/main.js edge --config "$work/edge.yaml" >"$out/edge.log" 2>&1 & pids+=($!)
curl -s -o /dev/null --retry-connrefused --retry 30 --retry-delay 1 "http://127.0.0.1:$http_port/"
operator_key="$(tuna keys create --scope reservations --name conformance-operator --ca "$work/tunnel.crt" | tail -n 1)"

# Dedicated: every Gateway's pods run this checkout's operator image from the cluster's registry,
# their ServiceAccounts bound to config/rbac's read-only ClusterRole tuna-data-plane.
data_plane_flags=() class_params=""
if [[ $data_plane == Dedicated ]]; then
  image_ref="$TUNA_REGISTRY/tuna/operator:conformance"
  log "building and pushing $image_ref"
  hack/image.sh operator --push "$image_ref" >&2
  "$kubectl" apply -f config/rbac/operator.yaml >&2
  "$kubectl" apply -f config/crd/tuna.dev_gatewayparameters.yaml >&2
  "$kubectl" wait --for condition=Established crd/gatewayparameters.tuna.dev --timeout 60s >&2
  "$kubectl" apply -f - >&2 <<EOF
apiVersion: tuna.dev/v1alpha1
kind: GatewayParameters
metadata: { name: dedicated, namespace: tuna-system }
spec: { dataPlane: Dedicated }
EOF
  class_params=", parametersRef: { group: tuna.dev, kind: GatewayParameters, name: dedicated, namespace: tuna-system }"
  data_plane_flags=(--data-plane-image "$image_ref")
fi

# A GatewayClass left by an earlier run (TUNA_CONFORMANCE_KEEP_CLUSTER) carries the features an
# earlier operator advertised: start from a fresh one, so what is read below is this operator's.
"$kubectl" delete gatewayclass tuna --ignore-not-found --wait >&2
"$kubectl" apply -f - >&2 <<EOF
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: tuna }
spec: { controllerName: tuna.dev/gateway-controller$class_params }
EOF
TUNA_ACCESS_LOG="$out/access.log" hack/node24.sh node dist/cli/main.js operator --key "$operator_key" --ca "$work/tunnel.crt" --health-addr "127.0.0.1:$health_port" "${data_plane_flags[@]}" >"$out/operator.log" 2>&1 & pids+=($!)

# The features to test are the ones the GatewayClass advertises once tuna has accepted it.
features="${TUNA_CONFORMANCE_FEATURES:-}"   # for development: test fewer features than advertised
for _ in $(seq 1 60); do
  [[ -n "$features" ]] && break
  sleep 1
  features="$("$kubectl" get gatewayclass tuna -o jsonpath='{range .status.supportedFeatures[*]}{.name}{","}{end}' 2>/dev/null || true)"
done
[[ -n "$features" ]] || { log "GatewayClass tuna has no supportedFeatures after 60 s (see $out/operator.log)"; exit 1; }
features="${features%,}"
log "features advertised: $features (data plane: $data_plane)"
features="$(suite_feature_names "$suite_version" "$features")"
log "features tested, as suite v$suite_version names them: $features"

version="$(node -p 'require("./package.json").version')"
suite_flags=(
  -gateway-class tuna -supported-features "$features" -conformance-profiles "$profiles"
  -report-output "$out/report.yaml" -organization tuna -project tuna -url https://github.com/tuna-dev/tuna
  -version "v$version" -contact "https://github.com/tuna-dev/tuna/issues" -mode default
  -cleanup-base-resources=false
  # GatewayStaticAddresses: an address of the edge's pool nobody else is given (the pool hands out
  # from the bottom), and one outside it (loopback too: nothing is ever sent to it).
  -usable-address 127.77.255.201 -unusable-address 127.78.0.1
)
[[ -n "$run_test" ]] && suite_flags+=(-run-test "$run_test")
log "running the suite (log: $out/suite.log)"
status=0
(cd "$work" && "$TUNA_CONFORMANCE_BIN" -test.v -test.timeout 50m -test.run '^TestConformance$' "${suite_flags[@]}" "${extra[@]}") \
  >"$out/suite.log" 2>&1 || status=$?
grep -E '^\s*--- (PASS|FAIL|SKIP)' "$out/suite.log" | sed 's/ (.*//' | awk '{print $2}' | sort | uniq -c >&2 || true
if (( status != 0 )); then
  # What failed and why, here: CI keeps this output, not the temp folder.
  log "failing tests and the suite's error lines (full log: $out/suite.log):"
  grep -E '^\s*--- FAIL' "$out/suite.log" >&2 || true
  grep -E -A4 '^\s+Error:' "$out/suite.log" | cut -c1-400 | head -80 >&2 || true
  # the suite's t.Fatalf lines carry no "Error:" (a request that never got the expected answer):
  # the last lines each failing test logged say what it saw
  awk -v keep=25 -f hack/conformance/fail-lines.awk "$out/suite.log" "$out/suite.log" | head -200 >&2 || true
  tail -20 "$out/operator.log" | sed 's/^/operator: /' >&2 || true
fi
if [[ -f "$out/report.yaml" ]]; then
  # the report of suite v1.6.0/v1.6.1 may count a parallel test as passed before it ran
  # (hack/conformance/release.sh): what go test saw must agree with it, or the run failed
  agrees=1
  hack/conformance/cross-check.sh "$out/suite.log" "$out/report.yaml" || { agrees=0 status=1; }
  hack/conformance/summary.sh "$out/report.yaml"
  if [[ $publish == 1 && $agrees == 0 ]]; then
    log "report not published: it disagrees with the go test output"
  elif [[ $publish == 1 ]]; then
    name="experimental-v$version-default-report.yaml"
    [[ $suite_version == "$TUNA_GATEWAY_API_VERSION" ]] || name="experimental-v$version-default-suite-v$suite_version-report.yaml"
    dest="docs/conformance/reports/v${suite_version%.*}/tuna"
    mkdir -p "$dest"
    cp "$out/report.yaml" "$dest/$name"
    log "report published as $dest/$name"
  fi
else
  log "no report written"
fi
exit "$status"
