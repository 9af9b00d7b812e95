#!/usr/bin/env bash
# pebble.sh — Let's Encrypt's pebble ACME test server (Debian package) for the edge's ACME tests.
#
#   hack/pebble.sh install
#       install Debian's pebble package when the pebble binary is missing (apt-get update first)
#   hack/pebble.sh start DIR ACME_PORT MGMT_PORT TLS_PORT HTTP_PORT DNS_ADDR
#       generate a throwaway CA and a server certificate for pebble's own HTTPS listeners (the
#       package ships none) into DIR, write DIR/pebble-config.json, then exec pebble on 127.0.0.1:
#       the ACME directory at https://127.0.0.1:ACME_PORT/dir, the management API (roots,
#       intermediates) on MGMT_PORT, both trusted through DIR/ca.pem only. Challenges are validated
#       against TLS_PORT (TLS-ALPN-01) and HTTP_PORT (HTTP-01) of the address DNS_ADDR (host:port,
#       a loopback DNS server the caller runs) gives for the name. The process stays in the
#       foreground (exec), so the caller owns it and stops it by its pid.
#
# PEBBLE_VA_NOSLEEP=1 removes pebble's artificial validation delays; PEBBLE_VA_ALWAYS_VALID=0
# makes it really validate every challenge. Its default 5% nonce rejection stays on: clients must
# retry badNonce (RFC 8555 §6.5).
set -euo pipefail

cmd_install() {
  if command -v pebble >/dev/null 2>&1; then return 0; fi
  echo "pebble.sh: installing Debian's pebble package" >&2
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q pebble >&2
  command -v pebble >/dev/null 2>&1 || { echo "pebble.sh: pebble installed but not on PATH" >&2; exit 1; }
}

write_certificates() {
  local dir="$1"
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=tuna pebble test CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=localhost" -keyout "$dir/key.pem" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
    -extfile "$dir/server.ext" -out "$dir/cert.pem" 2>/dev/null
}

cmd_start() {
  local dir="$1" acme="$2" mgmt="$3" tls="$4" http="$5" dns="$6"
  command -v pebble >/dev/null 2>&1 || { echo "pebble.sh: pebble not found; run: hack/pebble.sh install" >&2; exit 1; }
  mkdir -p "$dir"
  write_certificates "$dir"
  cat >"$dir/pebble-config.json" <<JSON
{
  "pebble": {
    "listenAddress": "127.0.0.1:$acme",
    "managementListenAddress": "127.0.0.1:$mgmt",
    "certificate": "$dir/cert.pem",
    "privateKey": "$dir/key.pem",
    "httpPort": $http,
    "tlsPort": $tls,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": false
  }
}
JSON
  cd "$dir"
  PEBBLE_VA_NOSLEEP=1 PEBBLE_VA_ALWAYS_VALID=0 exec pebble -config "$dir/pebble-config.json" -dnsserver "$dns" -strict=false
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; [ $# -eq 6 ] || { echo "usage: $0 start DIR ACME_PORT MGMT_PORT TLS_PORT HTTP_PORT DNS_ADDR" >&2; exit 2; }; cmd_start "$@" ;;
  *) echo "usage: $0 install | start DIR ACME_PORT MGMT_PORT TLS_PORT HTTP_PORT DNS_ADDR" >&2; exit 2 ;;
esac
