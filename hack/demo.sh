#!/usr/bin/env bash
# make demo: the OLTP sample on a real Kubernetes on this machine.
# Brings the cluster up (or reuses it) and installs the Helm chart with the
# locally built images (hack/cluster/install.sh), applies
# config/samples/oltp-bench.yaml scaled to this machine (3 clients on one
# shared volume of the local-shared class, 4 rate steps of 20 s), follows it
# live with the kubectl plugin, then prints the per-step table and writes the
# ops–latency image to _work/demo/oltp-bench.png (the object, with its
# status, to _work/demo/oltp-bench.yaml). STORAGEBENCH_NODES=3 (make demo
# NODES=3) runs it on three nodes (docs/local-cluster.md), the clients
# spread across them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=_work/demo
mkdir -p "$out" bin
export KUBECONFIG
KUBECONFIG="$(hack/cluster/install.sh)"
kubectl="$(hack/k8s-binaries.sh kubectl)/kubectl"
go build -o bin/kubectl-storagebench ./cmd/kubectl-storagebench
ns=storagebench-demo

"$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply -f - >&2
"$kubectl" -n "$ns" delete storagebenchmark oltp-bench --ignore-not-found --wait >&2
# The sample, scaled to a 2-core machine: the local-shared class (a
# ReadWriteMany directory on this machine's disk), a small working set, 3
# clients of 2 jobs, four offered rates, spread across nodes when there are
# several.
spread=false
[ "${STORAGEBENCH_NODES:-1}" -le 1 ] || spread=true
sed -e 's/storageClassName: ontap-nas/storageClassName: local-shared/' \
	-e 's/size: 1Ti/size: 2Gi/' -e 's/count: 5/count: 3/' -e 's/jobsPerClient: 4/jobsPerClient: 2/' \
	-e "s/spreadAcrossNodes: true/spreadAcrossNodes: $spread/" -e 's/workingSetPerClient: 96Gi.*/workingSetPerClient: 256Mi/' \
	-e '/start: 5000/,/max: 100000/c\      steps: [2000, 4000, 8000, 16000]' \
	-e 's/stepDuration: 120s/stepDuration: 20s/' -e 's/rampTime: 15s/rampTime: 2s/' \
	config/samples/oltp-bench.yaml | "$kubectl" -n "$ns" apply -f - >&2
bin/kubectl-storagebench -n "$ns" watch oltp-bench >&2 || true
bin/kubectl-storagebench -n "$ns" status oltp-bench
"$kubectl" -n "$ns" get pods -l storagebench.io/benchmark=oltp-bench,storagebench.io/role=client \
	-o custom-columns=POD:.metadata.name,NODE:.spec.nodeName,IP:.status.podIP
"$kubectl" -n "$ns" get storagebenchmark oltp-bench -o yaml >"$out/oltp-bench.yaml"
bin/kubectl-storagebench -n "$ns" report oltp-bench -o png --file "$out/oltp-bench.png"
echo "ops-latency image: $out/oltp-bench.png" >&2
