#!/usr/bin/env bash
# bench-tools.sh: installs what the `tunnel` benchmark compares tuna with (docs/benchmarking.md).
#
#   Debian packages (apt-get): nginx (one-hop reverse proxy), wrk (closed-loop HTTP/1.1 load),
#   nghttp2-client (h2load: open-loop fixed-rate load for the latency figure), curl (downloads) and
#   openssl (the tuna rows' throw-away tunnel certificate) when absent.
#   Go modules, built through the module proxy into a cache outside the repository keyed by version:
#   frp (frps + frpc) and chisel. A finished build is reused; nothing is written into the repository.
#
# Why not `go install module/cmd/x@version`: frp's go.mod carries a replace directive (its yamux
# fork), and `go install pkg@version` refuses modules with replace directives. So each module is
# downloaded with `go mod download` and built inside its own (read-only) module directory, which
# honours the module's go.mod and go.sum exactly as its authors release it.
#
# Usage: hack/bench-tools.sh           install what is missing, then print the paths
#        hack/bench-tools.sh --check   install nothing; print the paths of what is present
# Prints shell assignments on stdout (TUNA_WRK_BIN=/usr/bin/wrk ...), an empty value for a missing
# tool; progress goes to stderr.
set -euo pipefail

TUNA_FRP_VERSION="${TUNA_FRP_VERSION:-0.65.0}"
TUNA_CHISEL_VERSION="${TUNA_CHISEL_VERSION:-1.11.3}"
TUNA_CACHE="${TUNA_CACHE:-$HOME/.cache/tuna}"
TOOLS_DIR="$TUNA_CACHE/bench-tools"
FRP_DIR="$TOOLS_DIR/frp-v$TUNA_FRP_VERSION"
CHISEL_DIR="$TOOLS_DIR/chisel-v$TUNA_CHISEL_VERSION"

log() { echo "bench-tools: $*" >&2; }

# go_env runs go with the settings every build here shares: trimmed paths, no VCS stamping, the
# machine's own toolchain (no automatic toolchain download), static binaries.
go_env() {
  GOFLAGS="-trimpath -buildvcs=false" GOTOOLCHAIN=local GOPROXY="${GOPROXY:-https://proxy.golang.org}" \
    CGO_ENABLED=0 "$@"
}

# module_dir prints the extracted source directory of module $1 at version $2 (downloading it).
module_dir() {
  (cd "$(mktemp -d)" && go_env go mod download -json "$1@$2") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# build_go_tools builds module $1@$2 into directory $3, one binary per NAME=PACKAGE argument after
# that, atomically (a temporary directory renamed when every binary is built).
build_go_tools() {
  local module="$1" version="$2" dest="$3" src spec
  shift 3
  local missing=0
  for spec in "$@"; do [[ -x "$dest/${spec%%=*}" ]] || missing=1; done
  [[ $missing == 0 ]] && return 0
  command -v go >/dev/null || { log "go is not installed: cannot build $module"; return 1; }
  log "$module $version: downloading"
  src="$(module_dir "$module" "$version")"
  [[ -n "$src" && -d "$src" ]] || { log "$module@$version: download failed"; return 1; }
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  for spec in "$@"; do
    log "$module $version: go build ${spec#*=}"
    # explicit: under `build_go_tools ... || log`, set -e does not stop a failed build here
    (cd "$src" && go_env go build -ldflags="-s -w" -o "$dest.tmp/${spec%%=*}" "${spec#*=}") || return 1
  done
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

# install_debian installs the Debian packages whose commands are missing.
install_debian() {
  local want=()
  command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || want+=(nginx)
  command -v wrk >/dev/null || want+=(wrk)
  command -v h2load >/dev/null || want+=(nghttp2-client)
  command -v curl >/dev/null || want+=(curl)
  command -v openssl >/dev/null || want+=(openssl)
  [[ ${#want[@]} == 0 ]] && return 0
  local sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  log "apt-get install ${want[*]}"
  "${sudo[@]}" apt-get update -qq >&2
  # The nginx package would start a system nginx on port 80 where services may start; the benchmark
  # runs its own nginx with a generated config, so none is needed (policy-rc.d stops it in images).
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${want[@]}" >&2
}

# tool_path prints the path of command $1 (or of the fallback $2 when executable), or nothing.
tool_path() {
  command -v "$1" 2>/dev/null || { [[ -n "${2:-}" && -x "$2" ]] && echo "$2"; } || true
}

# print_paths writes the assignments the benchmark reads.
print_paths() {
  local p
  echo "TUNA_NGINX_BIN=$(tool_path nginx /usr/sbin/nginx)"
  echo "TUNA_WRK_BIN=$(tool_path wrk)"
  echo "TUNA_H2LOAD_BIN=$(tool_path h2load)"
  echo "TUNA_CURL_BIN=$(tool_path curl)"
  echo "TUNA_OPENSSL_BIN=$(tool_path openssl)"
  for p in "FRPS:$FRP_DIR/frps" "FRPC:$FRP_DIR/frpc" "CHISEL:$CHISEL_DIR/chisel"; do
    if [[ -x "${p#*:}" ]]; then echo "TUNA_${p%%:*}_BIN=${p#*:}"; else echo "TUNA_${p%%:*}_BIN="; fi
  done
  echo "TUNA_FRP_VERSION=$TUNA_FRP_VERSION"
  echo "TUNA_CHISEL_VERSION=$TUNA_CHISEL_VERSION"
}

if [[ "${1:-}" != "--check" ]]; then
  install_debian
  mkdir -p "$TOOLS_DIR"
  # A build that fails (no Go, no module proxy) leaves that tool's path empty: its rows then say
  # "not available" and the other contenders still run.
  build_go_tools github.com/fatedier/frp "v$TUNA_FRP_VERSION" "$FRP_DIR" frps=./cmd/frps frpc=./cmd/frpc || log "frp not built"
  # chisel's main package is the module root.
  build_go_tools github.com/jpillora/chisel "v$TUNA_CHISEL_VERSION" "$CHISEL_DIR" chisel=. || log "chisel not built"
fi
print_paths
