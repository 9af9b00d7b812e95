# shellcheck shell=bash
# release.sh: what differs between the releases of the conformance suite hack/conformance.sh can run
# (sourced). The default release is hack/cluster/versions.sh's TUNA_GATEWAY_API_VERSION; another one
# is asked for with -suite-version (docs/conformance.md, "Two releases of the suite").
#
# Between the v1.6 releases, for tuna:
#   - the feature of spec.infrastructure is GatewayInfrastructurePropagation up to v1.6.2 and
#     GatewayInfrastructure from v1.6.3 (sigs.k8s.io/gateway-api pkg/features/gateway.go); tuna's
#     GatewayClass advertises v1.6.3's names, so the older releases are given theirs;
#   - GatewayInvalidParametersRef is a core test up to v1.6.2 (tests/gateway-invalid-parameters-ref.go,
#     Features [Gateway]) and an extended one from v1.6.3 (tests/gateway-infrastructure.go, Features
#     [Gateway, GatewayInfrastructure]): nothing to translate, but the core counts differ by one;
#   - v1.6.0 and v1.6.1 write the report when the loop over the tests returns, before Go has run
#     the parallel ones, so a parallel test is counted as passed before it ran (v1.6.2 writes it in a
#     cleanup, after them). hack/conformance/cross-check.sh compares the report with the go test
#     output of every run, whatever the release.

# TUNA_SUITE_RELEASES are the releases this file knows the differences of.
TUNA_SUITE_RELEASES=(1.6.0 1.6.1 1.6.2 1.6.3)

# suite_release_known VERSION: succeeds if VERSION is one of TUNA_SUITE_RELEASES.
suite_release_known() {
  local known
  for known in "${TUNA_SUITE_RELEASES[@]}"; do [[ "$1" == "$known" ]] && return 0; done
  return 1
}

# suite_feature_names VERSION LIST: prints LIST (comma-separated feature names as tuna's GatewayClass
# advertises them, v1.6.3's) spelled as release VERSION names them.
suite_feature_names() {
  local version="$1" list="$2" out=() name
  local IFS=,
  for name in $list; do
    case "$version:$name" in
      1.6.[012]:GatewayInfrastructure) out+=(GatewayInfrastructurePropagation) ;;
      *) out+=("$name") ;;
    esac
  done
  echo "${out[*]}"
}
