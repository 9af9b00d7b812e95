#!/usr/bin/env bash
# chromium.sh — Debian's chromium for the request inspector's browser test (test/e2e/inspector-page.test.ts).
#
#   hack/chromium.sh install
#       install Debian's chromium package when no chromium binary is on PATH (apt-get update first)
#   hack/chromium.sh path
#       print the path of the chromium binary (after install)
#
# The test drives the page over the Chrome DevTools protocol (--remote-debugging-port on loopback,
# headless); nothing is downloaded by npm, and no browser build of its own is fetched.
set -euo pipefail

find_chromium() {
  command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true
}

cmd_install() {
  if [ -n "$(find_chromium)" ]; then return 0; fi
  echo "chromium.sh: installing Debian's chromium package" >&2
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium >&2
  [ -n "$(find_chromium)" ] || { echo "chromium.sh: chromium installed but not on PATH" >&2; exit 1; }
}

cmd_path() {
  local p
  p="$(find_chromium)"
  [ -n "$p" ] || { echo "chromium.sh: no chromium on PATH; run hack/chromium.sh install" >&2; exit 1; }
  echo "$p"
}

case "${1:-}" in
  install) cmd_install ;;
  path) cmd_path ;;
  *) echo "usage: hack/chromium.sh install|path" >&2; exit 2 ;;
esac
