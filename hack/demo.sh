#!/usr/bin/env bash
# The OLTP sample on a real single-node Kubernetes on this machine: brings
# the cluster up (or reuses it), installs the Helm chart with the locally
# built images, applies config/samples/oltp-bench.yaml scaled to this
# machine (3 clients, a local-path volume each, 4 rate steps of 20 s), follows
# it with the kubectl plugin, then prints the per-step table and writes the
# ops–latency image to _work/demo-cluster/oltp-bench.png.
set -euo pipefail
cd "$(dirname "$0")/.."
out=_work/demo-cluster
mkdir -p "$out" bin
export KUBECONFIG
KUBECONFIG="$(hack/cluster/up.sh)"
kubectl="$(hack/k8s-binaries.sh kubectl)/kubectl"
go build -o bin/kubectl-storagebench ./cmd/kubectl-storagebench
ns=storagebench-demo

bin/helm upgrade --install storagebench charts/storagebench -n storagebench-system --create-namespace --wait --timeout 3m \
	--set image.tag=dev --set runnerImage.tag=dev --set image.pullPolicy=Never --set runnerImage.pullPolicy=Never >&2
"$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply -f - >&2
"$kubectl" -n "$ns" delete storagebenchmark oltp-bench --ignore-not-found --wait >&2
# The sample, scaled to a 2-core machine: the default local-path class
# (ReadWriteOnce only, so one volume per client instead of one shared), a
# small working set, four offered rates, no node spreading.
sed -e 's/storageClassName: ontap-nas/storageClassName: local-path/' \
	-e 's/size: 1Ti/size: 1Gi/' -e 's/sharing: Shared/sharing: PerClient/' -e 's/count: 5/count: 3/' -e 's/jobsPerClient: 4/jobsPerClient: 2/' \
	-e 's/spreadAcrossNodes: true/spreadAcrossNodes: false/' -e 's/workingSetPerClient: 96Gi.*/workingSetPerClient: 256Mi/' \
	-e 's/accessMode: ReadWriteMany/accessMode: ReadWriteOnce/' \
	-e '/start: 5000/,/max: 100000/c\      steps: [2000, 4000, 8000, 16000]' \
	-e 's/stepDuration: 120s/stepDuration: 20s/' -e 's/rampTime: 15s/rampTime: 2s/' \
	config/samples/oltp-bench.yaml | "$kubectl" -n "$ns" apply -f - >&2
bin/kubectl-storagebench -n "$ns" watch oltp-bench >&2 || true
bin/kubectl-storagebench -n "$ns" status oltp-bench
bin/kubectl-storagebench -n "$ns" report oltp-bench -o png --file "$out/oltp-bench.png"
