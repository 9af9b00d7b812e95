#!/usr/bin/env bash
# podinfo.sh: podinfo (github.com/stefanprodan/podinfo), a chart no one here wrote, for the
# cluster test helm-install.test.ts: builds podinfo and podcli from the Go module the proxy serves (with the
# chart and the web UI in the same module), into the cache outside the repository keyed by
# version, and assembles its image the way its Dockerfile does — /home/app/podinfo, /home/app/ui,
# /usr/local/bin/podcli, user app, workdir /home/app, cmd ./podinfo — on an empty base (the
# binaries are static; alpine's packages are not needed by the chart), with crane.
#
#   hack/podinfo.sh [--push REF]
#
# Prints TUNA_PODINFO_CHART=<the module's charts/podinfo> and, with --push, TUNA_PODINFO_IMAGE=REF
# on stdout; progress goes to stderr.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/go-tools.sh
source "$repo/hack/lib/go-tools.sh"
# The module has no /v6 path, so the proxy serves podinfo 6.9.2 (its chart's version) as this
# pseudo-version of commit e86405a.
TUNA_PODINFO_VERSION="${TUNA_PODINFO_VERSION:-v1.8.1-0.20250910200901-e86405a8674e}"
die() { echo "podinfo: $*" >&2; exit 2; }
push=""
while (($#)); do
  case "$1" in
    --push) [[ $# -ge 2 ]] || die "--push needs a reference"; push="$2"; shift ;;
    *) die "unknown argument $1 (usage: hack/podinfo.sh [--push REF])" ;;
  esac
  shift
done

dir="$TUNA_CACHE/podinfo-$TUNA_PODINFO_VERSION"
ld="-X github.com/stefanprodan/podinfo/pkg/version.REVISION=${TUNA_PODINFO_VERSION##*-}"
go_build_tools github.com/stefanprodan/podinfo "$TUNA_PODINFO_VERSION" "$dir/bin" \
  "podinfo=./cmd/podinfo=$ld" "podcli=./cmd/podcli=$ld"
src="$(go_module_dir github.com/stefanprodan/podinfo "$TUNA_PODINFO_VERSION")"
[[ -d "$src/charts/podinfo" && -d "$src/ui" ]] || die "the module $TUNA_PODINFO_VERSION has no charts/podinfo or ui"
echo "TUNA_PODINFO_CHART=$src/charts/podinfo"
[[ -z "$push" ]] && exit 0

eval "$("$repo/hack/crane.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root/etc" "$root/tmp" "$root/home/app" "$root/usr/local/bin"
printf 'root:x:0:0:root:/root:/sbin/nologin\napp:x:65532:65532:app:/home/app:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\napp:x:65532:\n' >"$root/etc/group"
chmod 1777 "$root/tmp"
cp "$dir/bin/podinfo" "$root/home/app/podinfo"
cp "$dir/bin/podcli" "$root/usr/local/bin/podcli"
cp -R "$src/ui" "$root/home/app/ui"
chmod -R u+w,a+rX "$root"
tar -C "$root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -czf "$work/layer.tar.gz" .
"$TUNA_CRANE_BIN" append --oci-empty-base -f "$work/layer.tar.gz" -t "$push" >/dev/null 2>"$work/crane.log" || { cat "$work/crane.log" >&2; die "crane append failed"; }
"$TUNA_CRANE_BIN" mutate --set-platform linux/amd64 --user 65532:65532 --workdir /home/app --cmd ./podinfo \
  --env PATH=/usr/local/bin:/usr/bin:/bin -l org.opencontainers.image.source=https://github.com/stefanprodan/podinfo \
  -t "$push" "$push" >/dev/null 2>"$work/crane.log" || { cat "$work/crane.log" >&2; die "crane mutate failed"; }
echo "podinfo: pushed $push ($(du -m "$work/layer.tar.gz" | cut -f1) MiB compressed)" >&2
echo "TUNA_PODINFO_IMAGE=$push"
