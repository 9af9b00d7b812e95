#!/usr/bin/env bash
# kubeconfig.sh DIR SERVER NAME: writes DIR/NAME.kubeconfig for the client certificate DIR/NAME.crt.
# Paths, not inline data, so the file holds no key material itself.
set -euo pipefail
dir="$1" server="$2" name="$3"
cat >"$dir/$name.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: tuna
  cluster:
    server: $server
    certificate-authority: $dir/ca.crt
users:
- name: $name
  user:
    client-certificate: $dir/$name.crt
    client-key: $dir/$name.key
contexts:
- name: tuna
  context: {cluster: tuna, user: $name}
current-context: tuna
YAML
