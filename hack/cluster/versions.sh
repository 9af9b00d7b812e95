# shellcheck shell=bash disable=SC2034
# versions.sh: the versions of the Go-built test tools and where their builds are cached (sourced).
# Override any of them from the environment; the cache directories are keyed by version.
TUNA_K8S_VERSION="${TUNA_K8S_VERSION:-1.37.2}"
TUNA_ETCD_VERSION="${TUNA_ETCD_VERSION:-3.6.16}"
TUNA_GATEWAY_API_VERSION="${TUNA_GATEWAY_API_VERSION:-1.6.3}"
TUNA_CACHE="${TUNA_CACHE:-$HOME/.cache/tuna}"
TUNA_K8S_DIR="$TUNA_CACHE/k8s-v$TUNA_K8S_VERSION"
TUNA_ETCD_DIR="$TUNA_CACHE/etcd-v$TUNA_ETCD_VERSION"
TUNA_ECHO_DIR="$TUNA_CACHE/echo-basic-v$TUNA_GATEWAY_API_VERSION"
