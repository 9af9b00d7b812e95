#!/usr/bin/env bash
# kind/down.sh: deletes the kind cluster made by kind/up.sh.
set -euo pipefail
kind delete cluster --name "${TUNA_KIND_NAME:-tuna}"
