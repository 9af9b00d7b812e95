#!/usr/bin/env bash
# kind/up.sh: a kind cluster with the Gateway API CRDs and the tuna operator installed from this
# checkout (image built with Docker, loaded into kind, Helm chart charts/tuna).
# Needs Docker, kind, kubectl and helm on PATH. Environment: TUNA_KIND_NAME (default tuna),
# TUNA_IMAGE (default tuna/operator:dev), TUNA_GATEWAY_CHANNEL (standard|experimental, default
# experimental: TCPRoute/TLSRoute are experimental), TUNA_HELM_VALUES (extra values file, optional).
set -euo pipefail
cd "$(dirname "$0")/../.."
name="${TUNA_KIND_NAME:-tuna}"
image="${TUNA_IMAGE:-tuna/operator:dev}"
channel="${TUNA_GATEWAY_CHANNEL:-experimental}"

for tool in docker kind kubectl helm go; do
  command -v "$tool" >/dev/null || { echo "kind/up.sh: $tool is not on PATH" >&2; exit 1; }
done
docker info >/dev/null 2>&1 || { echo "kind/up.sh: no Docker engine is running" >&2; exit 1; }

if ! kind get clusters | grep -qx "$name"; then
  kind create cluster --name "$name" --config hack/kind/kind.yaml --wait 120s
fi
kubeconfig="$(mktemp)"
trap 'rm -f "$kubeconfig"' EXIT
kind get kubeconfig --name "$name" >"$kubeconfig"
export KUBECONFIG="$kubeconfig"

hack/gateway-api-crds.sh "$channel"

docker build -t "$image" .
kind load docker-image "$image" --name "$name"

values=()
[[ -n "${TUNA_HELM_VALUES:-}" ]] && values=(-f "$TUNA_HELM_VALUES")
# pullPolicy Never: the image exists only inside the kind node (kind load), not in a registry.
helm upgrade --install tuna charts/tuna --namespace tuna-system --create-namespace \
  --set image.repository="${image%:*}" --set image.tag="${image##*:}" --set image.pullPolicy=Never \
  "${values[@]}" --wait --timeout 5m
echo "kind/up.sh: tuna is installed; use: kind get kubeconfig --name $name > kubeconfig"
