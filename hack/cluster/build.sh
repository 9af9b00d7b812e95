#!/usr/bin/env bash
# build.sh: builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kubectl) and
# echo-basic from Go modules through the module proxy, into a cache outside the repository keyed by
# version. A finished build is reused; nothing built or fetched is written into the repository.
#
# Why a wrapper module: k8s.io/kubernetes replaces its k8s.io/* staging modules with ./staging paths,
# and a dependency's replace directives are ignored, so we generate a go.mod that requires
# k8s.io/kubernetes and replaces each staging module with its published v0.<minor>.<patch>.
#
# Prints the cache paths as shell assignments (TUNA_K8S_BIN=..., TUNA_ETCD_BIN=..., TUNA_ECHO_BIN=...)
# on stdout; progress goes to stderr.
set -euo pipefail

# shellcheck source=versions.sh
source "$(dirname "$0")/versions.sh"

log() { echo "build: $*" >&2; }

# go_build_env runs go with the settings every build here shares: 2 cores, no VCS stamping, trimmed
# paths, module graph updated as needed (the wrapper has no go.sum until its first build).
go_build_env() {
  GOFLAGS="-trimpath -mod=mod -buildvcs=false" GOTOOLCHAIN=local GOPROXY="${GOPROXY:-https://proxy.golang.org}" \
    CGO_ENABLED=0 "$@"
}

# module_dir prints the extracted source directory of module $1 at version $2 (downloading it).
module_dir() {
  (cd "$(mktemp -d)" && go_build_env go mod download -json "$1@$2") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# build_k8s writes $TUNA_K8S_DIR/bin/{kube-apiserver,kube-controller-manager,kubectl}.
build_k8s() {
  local dir="$TUNA_K8S_DIR" ver="$TUNA_K8S_VERSION" minor patch major
  [[ -x "$dir/bin/kube-apiserver" && -x "$dir/bin/kube-controller-manager" && -x "$dir/bin/kubectl" ]] && return 0
  major=${ver%%.*}; minor=${ver#*.}; patch=${minor#*.}; minor=${minor%%.*}
  log "k8s v$ver: generating wrapper module in $dir/src"
  mkdir -p "$dir/src"
  local gomod
  gomod="$(cd "$(mktemp -d)" && go_build_env go mod download -json "k8s.io/kubernetes@v$ver" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  {
    echo "module tuna.test/k8s-build"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes v$ver"
    echo
    echo "replace ("
    # Each "k8s.io/x => ./staging/src/k8s.io/x" line of the real go.mod becomes a published version.
    sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/.*#\t\1 => \1 v0.'"$minor.$patch"'#p' "$gomod"
    echo ")"
  } >"$dir/src/go.mod"
  printf 'package main\n' >"$dir/src/main.go"
  local pkg="k8s.io/component-base/version" cgo="k8s.io/client-go/pkg/version" ld="-s -w" v
  for v in "$pkg" "$cgo"; do
    ld+=" -X $v.gitVersion=v$ver -X $v.gitMajor=$major -X $v.gitMinor=$minor"
    ld+=" -X $v.gitTreeState=clean -X $v.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  log "k8s v$ver: go build (this is the long part on 2 cores)"
  mkdir -p "$dir/bin.tmp"
  (cd "$dir/src" && go_build_env go build -p 2 -ldflags "$ld" -o "$dir/bin.tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl)
  rm -rf "${dir:?}/bin" && mv "$dir/bin.tmp" "$dir/bin"
}

# build_etcd writes $TUNA_ETCD_DIR/bin/etcd (the server's main package is the module root).
build_etcd() {
  local dir="$TUNA_ETCD_DIR" ver="$TUNA_ETCD_VERSION"
  [[ -x "$dir/bin/etcd" ]] && return 0
  log "etcd v$ver: building"
  mkdir -p "$dir/src" "$dir/bin.tmp"
  printf 'module tuna.test/etcd-build\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ver" >"$dir/src/go.mod"
  printf 'package main\n' >"$dir/src/main.go"
  (cd "$dir/src" && go_build_env go build -p 2 \
    -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v$ver" -o "$dir/bin.tmp/etcd" go.etcd.io/etcd/server/v3)
  rm -rf "${dir:?}/bin" && mv "$dir/bin.tmp" "$dir/bin"
}

# build_echo writes $TUNA_ECHO_DIR/bin/echo-basic (the Gateway API conformance echo server).
build_echo() {
  local dir="$TUNA_ECHO_DIR" ver="$TUNA_GATEWAY_API_VERSION"
  [[ -x "$dir/bin/echo-basic" ]] && return 0
  log "echo-basic v$ver: building"
  mkdir -p "$dir/src" "$dir/bin.tmp"
  printf 'module tuna.test/echo-build\n\ngo 1.26.0\n\nrequire (\n\tsigs.k8s.io/gateway-api v%s\n\tsigs.k8s.io/gateway-api/conformance v%s\n)\n' \
    "$ver" "$ver" >"$dir/src/go.mod"
  printf 'package main\n' >"$dir/src/main.go"
  (cd "$dir/src" && go_build_env go build -p 2 -ldflags "-s -w" -o "$dir/bin.tmp/echo-basic" \
    sigs.k8s.io/gateway-api/conformance/echo-basic)
  rm -rf "${dir:?}/bin" && mv "$dir/bin.tmp" "$dir/bin"
}

started=$(date +%s)
build_echo
build_etcd
build_k8s
log "all binaries ready in $(( $(date +%s) - started ))s"
echo "TUNA_K8S_BIN=$TUNA_K8S_DIR/bin"
echo "TUNA_ETCD_BIN=$TUNA_ETCD_DIR/bin"
echo "TUNA_ECHO_BIN=$TUNA_ECHO_DIR/bin"
