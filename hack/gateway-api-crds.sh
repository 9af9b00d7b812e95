#!/usr/bin/env bash
# gateway-api-crds.sh [standard|experimental]: installs the Gateway API CRDs (and the
# ValidatingAdmissionPolicy that guards upgrades) into the cluster named by KUBECONFIG, or into the
# test cluster when KUBECONFIG is unset. The manifests come from the sigs.k8s.io/gateway-api Go module
# (its zip carries config/crd/), fetched through the Go module proxy, so no other download is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
source hack/cluster/env.sh
channel="${1:-standard}"
case "$channel" in standard|experimental) ;; *) echo "usage: $0 [standard|experimental]" >&2; exit 2 ;; esac

dir="$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/gateway-api@v$TUNA_GATEWAY_API_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$dir/config/crd/$channel" ]] || { echo "gateway-api-crds: no config/crd/$channel in $dir" >&2; exit 1; }

kubectl="$(command -v kubectl || true)"
[[ -x "$TUNA_K8S_DIR/bin/kubectl" ]] && kubectl="$TUNA_K8S_DIR/bin/kubectl"
[[ -n "$kubectl" ]] || { echo "gateway-api-crds: no kubectl (run hack/cluster/build.sh)" >&2; exit 1; }
export KUBECONFIG="${KUBECONFIG:-$TUNA_CLUSTER_DIR/admin.kubeconfig}"

policy=() crds=()
for f in "$dir/config/crd/$channel"/*.yaml; do
  case "$(basename "$f")" in
    kustomization.yaml) ;;
    *_vap_*) policy+=(-f "$f") ;;   # the ValidatingAdmissionPolicy and its binding
    *) crds+=(-f "$f") ;;
  esac
done
# The safe-upgrades ValidatingAdmissionPolicy of either channel denies putting experimental CRDs over
# standard ones; asking for the experimental channel is that decision, so remove the policy first, as
# its message says (the experimental channel's own policy is applied again after the CRDs).
if [[ "$channel" == experimental ]]; then
  "$kubectl" delete --ignore-not-found validatingadmissionpolicybinding,validatingadmissionpolicy \
    safe-upgrades.gateway.networking.k8s.io >&2
fi
# Server-side apply: the CRDs are too large for the last-applied annotation of client-side apply,
# and --force-conflicts lets the experimental channel take over fields the standard one set.
# Retried (bounded): admission learns of the deleted policy through an informer, a moment later.
for attempt in $(seq 1 20); do
  "$kubectl" apply --server-side --force-conflicts "${crds[@]}" >&2 && break
  (( attempt < 20 )) || exit 1
  sleep 1
done
# The policy after the CRDs: applied together, it could take effect half-way through a channel switch.
"$kubectl" apply --server-side --force-conflicts "${policy[@]}" >&2
"$kubectl" wait --for condition=Established --timeout 60s "${crds[@]}" >&2
echo "gateway-api-crds: v$TUNA_GATEWAY_API_VERSION $channel channel installed" >&2
