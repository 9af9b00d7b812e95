#!/usr/bin/env bash
# kind/up.sh: a kind cluster with the Gateway API CRDs, a tuna edge (charts/tuna-edge) and the tuna
# operator (charts/tuna), both from images built from this checkout with the Dockerfile and loaded
# into kind. UNTESTED on the project's machines: they have no Docker engine (hack/kind/README.md).
# Needs Docker, kind, kubectl, helm, go and node on PATH. Environment: TUNA_KIND_NAME (default tuna),
# TUNA_IMAGE_TAG (default dev), TUNA_GATEWAY_CHANNEL (standard|experimental, default experimental:
# TCPRoute/TLSRoute are experimental), TUNA_KIND_EDGE (chart: install charts/tuna-edge, the default;
# external: no edge here, give edge.address and the key in TUNA_HELM_VALUES), TUNA_BASE_DOMAIN
# (default tuna.localhost), TUNA_HELM_VALUES (extra values file for charts/tuna, optional).
set -euo pipefail
cd "$(dirname "$0")/../.."
name="${TUNA_KIND_NAME:-tuna}"
tag="${TUNA_IMAGE_TAG:-dev}"
channel="${TUNA_GATEWAY_CHANNEL:-experimental}"
edge_mode="${TUNA_KIND_EDGE:-chart}"
base_domain="${TUNA_BASE_DOMAIN:-tuna.localhost}"

for tool in docker kind kubectl helm go node; do
  command -v "$tool" >/dev/null || { echo "kind/up.sh: $tool is not on PATH" >&2; exit 1; }
done
docker info >/dev/null 2>&1 || { echo "kind/up.sh: no Docker engine is running" >&2; exit 1; }
[[ "$edge_mode" == chart || "$edge_mode" == external ]] || { echo "kind/up.sh: TUNA_KIND_EDGE is chart or external, not $edge_mode" >&2; exit 1; }

if ! kind get clusters | grep -qx "$name"; then
  kind create cluster --name "$name" --config hack/kind/kind.yaml --wait 120s
fi
kubeconfig="$(mktemp)"
trap 'rm -f "$kubeconfig"' EXIT
kind get kubeconfig --name "$name" >"$kubeconfig"
export KUBECONFIG="$kubeconfig"

hack/gateway-api-crds.sh "$channel"

for target in operator edge; do
  docker build --target "$target" -t "tuna/$target:$tag" .
  kind load docker-image "tuna/$target:$tag" --name "$name"
done

# pullPolicy Never: the images exist only inside the kind node (kind load), not in a registry.
values=()
if [[ "$edge_mode" == chart ]]; then
  kubectl create namespace tuna-edge --dry-run=client -o yaml | kubectl apply -f -
  kubectl label namespace tuna-edge pod-security.kubernetes.io/enforce=restricted --overwrite
  # In-cluster only: the operator dials the tunnel Service inside the cluster, so a plaintext
  # tunnel listener (no certificate to make); public HTTP is the NodePort mapped to 127.0.0.1:8080.
  helm upgrade --install edge charts/tuna-edge --namespace tuna-edge \
    --set image.repository=tuna/edge --set image.tag="$tag" --set image.pullPolicy=Never \
    --set baseDomain="$base_domain" --set tls.tunnel.insecurePlaintext=true \
    --set service.tunnel.type=ClusterIP --set service.public.type=NodePort --set service.public.nodePorts.http=30080 \
    --wait --timeout 5m
  if ! kubectl -n tuna-system get secret tuna-edge-key >/dev/null 2>&1; then
    # The bootstrap of docs/install.md, all inside the edge pod (its image has no shell; exec runs node):
    # the admin key, an account, and that account's reservations key for the operator.
    tuna_in_edge() { kubectl -n tuna-edge exec deploy/edge -- node /app/dist/cli/main.js "$@"; }
    field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(process.argv[1].split(".").reduce((o,k)=>o[k],v))})' "$1"; }
    admin="$(tuna_in_edge edge init --store /var/lib/tuna/edge.db --json | field token)"
    control=(--edge tcp://127.0.0.1:7443 --api-key "$admin" --json)
    account="$(tuna_in_edge accounts create kind "${control[@]}" | field id)"
    key="$(tuna_in_edge keys create --account "$account" --scope reservations "${control[@]}" | field token)"
    kubectl create namespace tuna-system --dry-run=client -o yaml | kubectl apply -f -
    kubectl -n tuna-system create secret generic tuna-edge-key --from-literal=apiKey="$key"
  fi
  values+=(--set edge.address=tcp://edge-tunnel.tuna-edge.svc.cluster.local:7443 --set credentials.existingSecret=tuna-edge-key)
fi
[[ -n "${TUNA_HELM_VALUES:-}" ]] && values+=(-f "$TUNA_HELM_VALUES")
helm upgrade --install tuna charts/tuna --namespace tuna-system --create-namespace \
  --set image.repository=tuna/operator --set image.tag="$tag" --set image.pullPolicy=Never \
  "${values[@]}" --wait --timeout 5m
echo "kind/up.sh: tuna is installed; use: kind get kubeconfig --name $name > kubeconfig"
[[ "$edge_mode" == chart ]] && echo "kind/up.sh: an Ingress for <name>.$base_domain answers at: curl -H 'Host: <name>.$base_domain' http://127.0.0.1:8080/"
exit 0
