#!/usr/bin/env bash
# image-rootfs.sh: stages the three root-filesystem layers of a tuna image, the same way for
# hack/image.sh (crane, no Docker engine) and for the Dockerfile's build stage:
#
#   DEST/base/  /etc/passwd and /etc/group (user and group nonroot, 65532), /etc/nsswitch.conf,
#               /tmp, and the shared libraries NODE links (ldd) with its ELF interpreter, each at
#               the path the dynamic loader looks for it: nothing else, no shell
#   DEST/node/  /usr/local/bin/node (NODE: an official Node 24 linux-x64 build)
#   DEST/app/   /app/package.json, /app/dist (the compiled CLI), /app/node_modules (production only)
#
# Usage: hack/image-rootfs.sh DEST NODE APP
#   APP is a folder holding package.json, dist/ and node_modules/ (npm ci --omit=dev).
# The layers change at different rates (libraries rarely, the app on every commit), so each is
# its own layer and an unchanged one keeps its digest.
set -euo pipefail
[[ $# == 3 ]] || { echo "usage: $0 DEST NODE APP" >&2; exit 2; }
dest="$1" node="$2" app="$3"
for f in "$node" "$app/package.json" "$app/dist/cli/main.js" "$app/node_modules"; do
  [[ -e "$f" ]] || { echo "image-rootfs: $f is missing" >&2; exit 1; }
done
rm -rf "$dest" && mkdir -p "$dest/base/etc" "$dest/base/tmp" "$dest/node/usr/local/bin" "$dest/app/app"

# The user the image runs as: numeric 65532 (distroless's nonroot), so runAsNonRoot can check it.
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dest/base/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$dest/base/etc/group"
# Name lookups (dns.lookup is glibc's getaddrinfo): the pod's /etc/hosts first, then its resolv.conf.
printf 'hosts: files dns\n' >"$dest/base/etc/nsswitch.conf"
chmod 1777 "$dest/base/tmp"

# ldd prints "name => /path (addr)" for each library and "/path (addr)" for the interpreter.
libs="$(ldd "$node" | sed -n -e 's/^[[:space:]]*[^ ]* => \(\/[^ ]*\) (0x.*$/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*$/\1/p')"
[[ -n "$libs" ]] || { echo "image-rootfs: ldd found no libraries for $node (not a dynamic linux binary?)" >&2; exit 1; }
for lib in $libs; do
  mkdir -p "$dest/base$(dirname "$lib")"
  cp -L "$lib" "$dest/base$lib"
done
chmod -R a+rX "$dest/base"

cp -L "$node" "$dest/node/usr/local/bin/node"
chmod 0755 "$dest/node/usr/local/bin/node"

cp "$app/package.json" "$dest/app/app/package.json"
cp -RH "$app/dist" "$app/node_modules" "$dest/app/app/"
chmod -R a+rX,go-w "$dest/app"
echo "image-rootfs: staged base ($(echo "$libs" | wc -w) libraries), node, app in $dest" >&2
