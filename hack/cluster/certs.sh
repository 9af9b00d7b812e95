#!/usr/bin/env bash
# certs.sh DIR: writes the test cluster's PKI into DIR with openssl: one CA, the apiserver's serving
# certificate, client certificates (admin, controller-manager, apiserver→kubelet, our kubelet's node
# identity and its binder identity), the kubelet's serving certificate, and the service-account key pair.
# Keys never leave DIR (a temp dir outside the repository) and nothing here is printed.
set -euo pipefail
dir="$1"
mkdir -p "$dir" && cd "$dir"
umask 077

openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -key ca.key -subj "/CN=tuna-test-ca" -days 7 -out ca.crt

# sign NAME SUBJECT EXT: a leaf certificate NAME.crt/NAME.key signed by the CA, with extensions EXT.
sign() {
  local name="$1" subject="$2" ext="$3"
  openssl genrsa -out "$name.key" 2048 2>/dev/null
  openssl req -new -key "$name.key" -subj "$subject" -out "$name.csr"
  printf '%s\n' "$ext" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 7 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

client='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
# The apiserver's SANs: loopback for us, the first service IP and the in-cluster names for clients
# that come through the `kubernetes` Service.
sign apiserver "/CN=kube-apiserver" 'basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:198.19.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local'
sign kubelet-serving "/CN=${TUNA_NODE_NAME:-tuna-node}" 'basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost'
sign admin "/O=system:masters/CN=tuna-admin" "$client"
sign controller-manager "/CN=system:kube-controller-manager" "$client"
sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
# The kubelet's node identity: the Node authorizer and NodeRestriction admission apply to it, as to a
# real kubelet. Binding pods is a scheduler's right, not a node's, so the binder has its own identity.
sign kubelet "/O=system:nodes/CN=system:node:${TUNA_NODE_NAME:-tuna-node}" "$client"
sign binder "/CN=system:kube-scheduler" "$client"

openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
rm -f ca.srl
