#!/usr/bin/env bash
# image.sh: builds the tuna OCI images without a Docker engine, with crane (hack/crane.sh).
#
#   hack/image.sh [operator|edge|all] [--push REF] [--tar FILE]
#
#   operator | edge   one image, whose command is `tuna operator` or `tuna edge` (default operator)
#   all               both (they share every layer; only their config differs)
#   --push REF        push to a registry: the full reference for one image; for `all`, REPO[:TAG]
#                     gives REPO/operator:TAG and REPO/edge:TAG. A loopback registry is plain HTTP:
#                     the test cluster's is $TUNA_REGISTRY (127.0.0.1:15000, hack/cluster/env.sh),
#                     from which its kubelet pulls, e.g. --push 127.0.0.1:15000/tuna/operator:dev
#   --tar FILE        write an OCI image layout as a tar file (both images for `all`, each named
#                     tuna/<component>:<version> in index.json); once untarred,
#                     `crane push --index DIR REF` pushes it
#   Neither: --tar tuna-<component>.oci.tar in the current directory.
#
# What the image is (kept equal to the Dockerfile's by test/unit/image-dockerfile.test.ts and
# test/e2e/image.test.ts):
# an empty base; three layers staged by hack/image-rootfs.sh: base (passwd/group with nonroot
# 65532, nsswitch.conf, /tmp, and only the shared libraries the node binary links), node (the
# official Node 24 linux-x64 build that hack/node24.sh caches), app (/app: package.json, the
# compiled CLI in dist/, production node_modules); user 65532:65532, workdir /app, entrypoint
# `node --max-semi-space-size=16 /app/dist/cli/main.js` (as the Dockerfile says why), command `operator` or `edge`, platform linux/amd64.
#
# Steps are cached outside the repository ($TUNA_CACHE/image): the production node_modules by
# the hash of package.json and package-lock.json, each gzipped layer by the hash of its tar, so
# an unchanged layer is neither recompressed nor given a new digest. crane assembles the images
# in a registry of its own (crane registry serve, in memory) on a loopback port, stopped on exit.
# Prints one line per image (reference, digest, compressed size) on stdout; progress on stderr.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export TUNA_CACHE="${TUNA_CACHE:-$HOME/.cache/tuna}"
log() { echo "image: $*" >&2; }
die() { echo "image: $*" >&2; exit 2; }

what=operator push="" tar=""
while (($#)); do
  case "$1" in
    operator | edge | all) what="$1" ;;
    --push) [[ $# -ge 2 ]] || die "--push needs a reference"; push="$2"; shift ;;
    --tar) [[ $# -ge 2 ]] || die "--tar needs a file"; tar="$2"; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (usage: hack/image.sh [operator|edge|all] [--push REF] [--tar FILE])" ;;
  esac
  shift
done
components=("$what")
[[ "$what" == all ]] && components=(operator edge)
[[ -z "$push" && -z "$tar" ]] && tar="$PWD/tuna-$what.oci.tar"
[[ -z "$tar" || "$tar" == /* ]] || tar="$PWD/$tar"

eval "$("$repo/hack/crane.sh")"
# crane logs every blob it pushes; its log is shown only when it fails.
crane() {
  "$TUNA_CRANE_BIN" "$@" 2>"$work/crane.log" || { cat "$work/crane.log" >&2; die "crane $1 failed"; }
}
# shellcheck source=node24.sh
source "$repo/hack/node24.sh"
node_bin="${TUNA_IMAGE_NODE:-$(command -v node)}"
[[ "$(uname -m)" == x86_64 ]] || die "the images are linux/amd64 and take this machine's node; run on x86_64"
version="$(node -p 'require(process.argv[1]).version' "$repo/package.json")"
[[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 24 ]] || die "$node_bin is not Node 24"

cache="$TUNA_CACHE/image"
work="$(mktemp -d)"
registry_pid=""
cleanup() {
  if [[ -n "$registry_pid" ]]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$cache/layers" "$work/app"

# The compiled CLI, into a fresh folder (a stale file of an older build must not ship).
log "compiling the CLI (tsc -p tsconfig.build.json)"
(cd "$repo" && node_modules/.bin/tsc -p tsconfig.build.json --outDir "$work/app/dist")
log "bundling the CLI (hack/bundle.js)"
(cd "$repo" && node hack/bundle.js "$work/app/dist")
cp "$repo/package.json" "$work/app/package.json"

# Production dependencies, cached by the hash of what decides them.
deps_key="$(cat "$repo/package.json" "$repo/package-lock.json" | sha256sum | cut -c1-16)"
deps="$cache/prod-deps-$deps_key"
if [[ ! -d "$deps/node_modules" ]]; then
  log "npm ci --omit=dev (production dependencies, cached as $deps)"
  rm -rf "$deps.tmp" && mkdir -p "$deps.tmp"
  cp "$repo/package.json" "$repo/package-lock.json" "$deps.tmp/"
  (cd "$deps.tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  rm -rf "$deps" && mv "$deps.tmp" "$deps"
fi
ln -s "$deps/node_modules" "$work/app/node_modules"

"$repo/hack/image-rootfs.sh" "$work/rootfs" "$node_bin" "$work/app"

# layer_of tars one staged folder the same way every time (sorted, owner root, mtime 0) and
# prints the path of its gzipped copy in the cache, named by the tar's sha256.
layer_of() {
  local dir="$1" raw="$work/$(basename "$1").tar" sum
  tar -C "$dir" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$raw" .
  sum="$(sha256sum "$raw" | cut -c1-64)"
  if [[ ! -f "$cache/layers/$sum.tar.gz" ]]; then
    log "compressing layer $(basename "$dir") ($(du -m "$raw" | cut -f1) MiB)"
    gzip -n -6 -c "$raw" >"$cache/layers/$sum.tar.gz.tmp"
    mv "$cache/layers/$sum.tar.gz.tmp" "$cache/layers/$sum.tar.gz"
  fi
  echo "$cache/layers/$sum.tar.gz"
}
layers=()
for part in base node app; do layers+=(-f "$(layer_of "$work/rootfs/$part")"); done

# crane mutates images in a registry: its own, in memory, on a loopback port it picks.
"$TUNA_CRANE_BIN" registry serve --address 127.0.0.1:0 2>"$work/registry.log" &
registry_pid=$!
port=""
for _ in $(seq 1 100); do
  port="$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")"
  [[ -n "$port" ]] && break
  kill -0 "$registry_pid" 2>/dev/null || die "crane registry serve failed: $(cat "$work/registry.log")"
  sleep 0.1
done
[[ -n "$port" ]] || die "crane registry serve did not report its port"
local_ref() { echo "127.0.0.1:$port/tuna/$1:$version"; }

revision="$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)"
refs=()
for c in "${components[@]}"; do
  ref="$(local_ref "$c")"
  log "assembling tuna/$c:$version"
  crane append --oci-empty-base "${layers[@]}" -t "$ref" >/dev/null
  mutate=(--set-platform linux/amd64 --user 65532:65532 --workdir /app
    --entrypoint /usr/local/bin/node,--max-semi-space-size=16,/app/dist/cli/main.js --cmd "$c"
    --env PATH=/usr/local/bin --env NODE_ENV=production
    -l "org.opencontainers.image.title=tuna-$c"
    -l "org.opencontainers.image.description=tuna $c: publish Kubernetes Services through outbound HTTP/2 reverse tunnels"
    -l org.opencontainers.image.licenses=Apache-2.0
    -l "org.opencontainers.image.version=$version"
    -l "org.opencontainers.image.revision=$revision")
  # The operator's probes and metrics (--health-addr in the chart); the edge's ports are its config's.
  [[ "$c" == operator ]] && mutate+=(--exposed-ports 8080/tcp)
  crane mutate "${mutate[@]}" -t "$ref" "$ref" >/dev/null
  refs+=("$ref")
done

# size_of prints the compressed size of an image (config and layers as the registry stores them).
size_of() {
  crane manifest "$1" | node -e 'const m = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const bytes = m.config.size + m.layers.reduce((n, l) => n + l.size, 0);
    console.log(`${(bytes / 1048576).toFixed(1)} MiB compressed, ${m.layers.length} layers`)'
}

for i in "${!components[@]}"; do
  c="${components[$i]}" ref="${refs[$i]}" target=""
  if [[ -n "$push" ]]; then
    target="$push"
    if [[ "$what" == all ]]; then
      repo_part="$push" tag="$version"
      # REPO[:TAG]: a colon after the last slash starts the tag (a registry's port comes before it)
      if [[ "${push##*/}" == *:* ]]; then tag="${push##*:}"; repo_part="${push%:*}"; fi
      target="$repo_part/$c:$tag"
    fi
    crane copy "$ref" "$target"
  fi
  echo "tuna/$c:$version ${target:+pushed to $target }digest $(crane digest "$ref"), $(size_of "$ref")"
done

if [[ -n "$tar" ]]; then
  crane pull --format=oci --annotate-ref "${refs[@]}" "$work/layout"
  # name each image tuna/<component>:<version> in index.json, not after the throwaway registry
  node -e 'const fs = require("fs"); const [file, prefix] = process.argv.slice(1);
    const index = JSON.parse(fs.readFileSync(file, "utf8"));
    for (const m of index.manifests) for (const k of ["org.opencontainers.image.ref.name", "io.containerd.image.name"])
      if (m.annotations?.[k]) m.annotations[k] = m.annotations[k].replace(prefix, "");
    fs.writeFileSync(file, JSON.stringify(index))' "$work/layout/index.json" "127.0.0.1:$port/"
  mkdir -p "$(dirname "$tar")"
  tar -C "$work/layout" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$tar.tmp" .
  mv "$tar.tmp" "$tar"
  log "wrote $tar ($(du -m "$tar" | cut -f1) MiB)"
fi
