#!/usr/bin/env bash
# Brings the cluster up (or reuses it, hack/cluster/up.sh; STORAGEBENCH_NODES),
# applies this build's CRD, and installs or upgrades the Helm chart as release storagebench in
# storagebench-system with the images up.sh imported (tag dev-<hash of their
# inputs>, so a changed operator rolls the manager), then waits for the
# manager. Prints the admin kubeconfig's path (the only line on stdout):
#
#   export KUBECONFIG=$(hack/cluster/install.sh [--set key=value ...])
#
# Extra arguments go to helm upgrade. Used by make demo, test/e2e and
# hack/measure.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh
kubeconfig="$(hack/cluster/up.sh)"
./hack/setup.sh >&2
tag="$(cat "$W/images.tag")"
# Helm installs a chart's CRDs on the first install only: on a reused
# cluster the CRD of an earlier build would stay. Apply this build's first
# (docs/install.md says the same to users).
log "applying the CRD of this build"
"$(hack/k8s-binaries.sh kubectl)/kubectl" --kubeconfig "$kubeconfig" apply --server-side --force-conflicts \
	-f charts/storagebench/crds/ >&2
log "helm upgrade --install storagebench (images $tag)"
bin/helm upgrade --install storagebench charts/storagebench --kubeconfig "$kubeconfig" \
	--namespace storagebench-system --create-namespace --wait --timeout 3m \
	--set image.tag="$tag" --set runnerImage.tag="$tag" \
	--set image.pullPolicy=Never --set runnerImage.pullPolicy=IfNotPresent "$@" >&2
echo "$kubeconfig"
