# shellcheck shell=bash
# go-tools.sh: builds Go programs from published modules into the cache outside the repository,
# keyed by version (sourced by hack/crane.sh and hack/helm.sh). Nothing is written into the repo.
#
# Each module is downloaded with `go mod download` and built inside its own (read-only) module
# directory, which honours the module's go.mod and go.sum exactly as its authors released them.
TUNA_CACHE="${TUNA_CACHE:-$HOME/.cache/tuna}"

# go_tool_env runs go with the settings every build here shares: trimmed paths, no VCS stamping,
# the machine's own toolchain (no automatic toolchain download), static binaries.
go_tool_env() {
  GOFLAGS="-trimpath -buildvcs=false" GOTOOLCHAIN=local GOPROXY="${GOPROXY:-https://proxy.golang.org}" \
    CGO_ENABLED=0 "$@"
}

# go_module_dir prints the extracted source directory of module $1 at version $2 (downloading it).
go_module_dir() {
  (cd "$(mktemp -d)" && go_tool_env go mod download -json "$1@$2") |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# go_build_tools builds module $1@$2 into directory $3, one binary per NAME=PACKAGE[=LDFLAGS]
# argument after that, atomically (a temporary directory renamed when every binary is built).
go_build_tools() {
  local module="$1" version="$2" dest="$3" src spec name rest pkg ld
  shift 3
  local missing=0
  for spec in "$@"; do [[ -x "$dest/${spec%%=*}" ]] || missing=1; done
  [[ $missing == 0 ]] && return 0
  command -v go >/dev/null || { echo "go-tools: go is not installed: cannot build $module" >&2; return 1; }
  echo "go-tools: $module $version: downloading" >&2
  src="$(go_module_dir "$module" "$version")"
  [[ -n "$src" && -d "$src" ]] || { echo "go-tools: $module@$version: download failed" >&2; return 1; }
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  for spec in "$@"; do
    name="${spec%%=*}"; rest="${spec#*=}"; pkg="${rest%%=*}"; ld=""
    [[ "$rest" == *=* ]] && ld="${rest#*=}"
    echo "go-tools: $module $version: go build $pkg" >&2
    (cd "$src" && go_tool_env go build -p 2 -ldflags="-s -w $ld" -o "$dest.tmp/$name" "$pkg")
  done
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}
