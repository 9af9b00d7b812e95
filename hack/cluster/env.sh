# shellcheck shell=bash disable=SC2034
# env.sh: where the test cluster lives and listens (sourced by up.sh, down.sh and the mocha hook's
# scripts). Every address is on 127.0.0.1; the state directory is outside the repository.
# shellcheck source=versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"
# The system temp directory (TMPDIR or its default), as mktemp sees it.
TUNA_CLUSTER_DIR="${TUNA_CLUSTER_DIR:-$(dirname "$(mktemp -u)")/tuna-cluster}"
TUNA_ETCD_PORT="${TUNA_ETCD_PORT:-12379}"
TUNA_ETCD_PEER_PORT="${TUNA_ETCD_PEER_PORT:-12380}"
TUNA_APISERVER_PORT="${TUNA_APISERVER_PORT:-16443}"
TUNA_KUBELET_PORT="${TUNA_KUBELET_PORT:-10250}"
TUNA_NODE_NAME="${TUNA_NODE_NAME:-tuna-node}"
TUNA_SERVICE_CIDR="${TUNA_SERVICE_CIDR:-198.19.0.0/16}"
# The `kubernetes` Service's ClusterIP (the first address of the range): pods reach the apiserver
# there through the kubelet's relay (KUBERNETES_SERVICE_HOST/PORT, in the apiserver's certificate).
TUNA_KUBERNETES_SERVICE_IP="${TUNA_KUBERNETES_SERVICE_IP:-198.19.0.1}"
# The cluster's image registry (crane registry serve, plain HTTP on loopback): hack/image.sh
# pushes there, the kubelet pulls from there. Its blobs live in the state directory.
TUNA_REGISTRY_PORT="${TUNA_REGISTRY_PORT:-15000}"
TUNA_REGISTRY="127.0.0.1:$TUNA_REGISTRY_PORT"
TUNA_APISERVER_URL="https://127.0.0.1:$TUNA_APISERVER_PORT"
# The processes up.sh starts (each has run/NAME.pid and logs/NAME.log).
TUNA_COMPONENTS=(registry etcd kube-apiserver kube-controller-manager kubelet)
