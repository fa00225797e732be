# storagebench — see README.md for the two commands that matter:
#   make demo   set up and run a real benchmark on this machine
#   make test   run the whole test suite (what CI runs)

GO ?= go
GOLANGCI_LINT = bin/golangci-lint
CONTROLLER_GEN = bin/controller-gen
HELM = bin/helm
KUSTOMIZE = bin/kustomize
PKGS = ./...
# The packages whose tests start a real kube-apiserver and etcd (the CRD's
# admission rules, the plugin): integration runs them, unit does not.
APISERVER_PKGS = ./api/v1alpha1/ ./cmd/kubectl-storagebench/
CHART = charts/storagebench

# make deploy / helm-install: the manager's and the client pods' images, and
# kubectl (default: the pinned one, built by hack/k8s-binaries.sh).
IMG ?= localhost/storagebench-manager:0.1.0
RUNNER_IMG ?= localhost/storagebench-runner:0.1.0
KUBECTL ?=

.PHONY: all setup setup-runtime build fmt vet lint test unit integration bench bench-data bench-heap regression-fp soak verify demo k8s-binaries clean manifests generate chart-crds chart-rbac helm-lint deploy undeploy helm-install helm-uninstall images plugin-image cluster-up cluster-install cluster-down demo-local e2e measure

all: build

## setup: install fio (Debian) and pinned Go tools under bin/.
setup:
	./hack/setup.sh

## setup-runtime: only what running benchmarks needs (fio).
setup-runtime:
	./hack/setup.sh runtime

## generate: deepcopy functions of the API types.
generate: setup
	$(CONTROLLER_GEN) object paths=./api/...

## manifests: the CRD and the manager's RBAC, from the API types and the
## controller's +kubebuilder markers, and their copies in the Helm chart;
## the chart's Grafana dashboard, from hack/dashboard (Grafana's foundation
## SDK).
manifests: setup
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=storagebench-manager paths=./controllers/... output:rbac:artifacts:config=config/rbac
	@$(MAKE) --no-print-directory chart-crds chart-rbac
	$(GO) run ./hack/dashboard -o $(CHART)/files/dashboard.json

## chart-crds: copy the generated CRDs into the chart (charts/storagebench/crds).
chart-crds:
	@mkdir -p $(CHART)/crds
	@rm -f $(CHART)/crds/*.yaml
	cp config/crd/bases/*.yaml $(CHART)/crds/

## chart-rbac: copy the generated manager ClusterRole into the chart, whose
## ClusterRole template takes its rules from the copy (.Files.Get).
chart-rbac:
	@mkdir -p $(CHART)/files
	cp config/rbac/role.yaml $(CHART)/files/manager-role.yaml

## helm-lint: lint the chart with its default values and with the optional
## objects on.
helm-lint: setup
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) --set metrics.serviceMonitor.enabled=true --set watchNamespaces='{a,b}' \
		--set 'policy.allowedRunnerImages={registry.example/runner:2}' --set 'policy.allowedTolerationKeys={*}'

## images: build the manager and runner images offline with buildah (as root,
## no registry) into docker-archive tarballs in a cache outside the clone and
## print their directory (ctr -n k8s.io images import DIR/*.tar); a second run
## costs nothing (hack/images.sh).
images:
	@./hack/images.sh

## plugin-image: render the README's ops-latency picture from the recorded
## real run (docs/images/oltp-curve.yaml, made by go run ./hack/record), and
## docs/backend-metrics.md's from the e2e suite's capped run with the
## storage's figures (docs/images/storage-view.yaml, copied from
## _work/e2e/storage-view-qos-rate.yaml), and the README's stall timeline
## from the e2e suite's paused volume (docs/images/timeline-stall.yaml,
## copied from _work/e2e/timeline-pause.yaml).
plugin-image:
	$(GO) run ./cmd/kubectl-storagebench report --from-file docs/images/oltp-curve.yaml -o png --file docs/images/ops-latency.png
	$(GO) run ./cmd/kubectl-storagebench report --from-file docs/images/storage-view.yaml -o png --file docs/images/storage-view.png
	$(GO) run ./cmd/kubectl-storagebench report --from-file docs/images/timeline-stall.yaml --timeline 1 -o png --file docs/images/timeline-stall.png

## cluster-up: start (or reuse) a real Kubernetes on this machine (etcd,
## control plane, containerd, kubelet, kube-proxy, bridge CNI, a default
## local-path class and raw block PVs on loop devices, the storagebench images
## imported, and the CSI path: the class csi-local of the test-bed CSI driver
## on every node, csi-up); prints its kubeconfig (hack/cluster/up.sh). On a
## cold machine it first builds the CSI sidecars (csi-sidecars, about 10
## minutes, cached). NODES=3 adds two nodes in network namespaces of their
## own (hack/cluster/node.sh), each with its own CSI driver; the default, one
## node, removes them.
NODES ?= 1
cluster-up:
	@STORAGEBENCH_NODES=$(NODES) hack/cluster/up.sh

## cluster-install: cluster-up, then install or upgrade the Helm chart with
## the images it imported; prints the kubeconfig (hack/cluster/install.sh).
cluster-install:
	@STORAGEBENCH_NODES=$(NODES) hack/cluster/install.sh

## cluster-down: stop that cluster by PID and clean up what it left (mounts,
## loop devices, cni0, iptables chains); PURGE=1 also removes its data.
cluster-down:
	@hack/cluster/down.sh $(if $(PURGE),--purge)

## build: compile every binary into bin/.
build:
	$(GO) build -o bin/ ./cmd/...

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet $(PKGS)

lint: setup
	$(GOLANGCI_LINT) run $(PKGS)

## unit: the Go tests that need Go and fio alone (real fio included): no
## root, no Kubernetes binaries, no cluster. Tests that run as root test
## more (the runner's cleanup of files owned by other users).
unit: setup-runtime
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /test/ | grep -v -x $(foreach p,$(APISERVER_PKGS),-e github.com/storagebench/storagebench/$(patsubst ./%/,%,$(p))))

## integration: the CRD's admission rules and the plugin on a real
## kube-apiserver and etcd (APISERVER_PKGS), the harness' self-test, the install manifests (the Helm
## chart and config/ rendered by bin/helm and bin/kustomize from make setup,
## then created with server-side dry run), then the operator against a real
## kube-apiserver, etcd and kube-controller-manager with real runners and
## fio; one package at a time, as they measure I/O rates. Beside them, on
## control planes of their own, one after the other: test/outage, which
## mostly waits for a stopped manager (4 minutes), then the short soak
## (test/soak's simulated day, about 8 minutes), which measures no rate;
## their output is printed at the end (_work/outage.log, _work/soak.log).
integration: setup-runtime k8s-binaries
	@mkdir -p _work; rm -f _work/outage.log _work/soak.log; echo "integration: test/outage, then test/soak, run beside the others (_work/outage.log, _work/soak.log)"; \
	( $(GO) test -count=1 -timeout 40m ./test/outage/ >_work/outage.log 2>&1; o=$$?; \
	  $(GO) test -count=1 -timeout 40m ./test/soak/... >_work/soak.log 2>&1; s=$$?; [ $$o -eq 0 ] && [ $$s -eq 0 ] ) & beside=$$!; \
	$(GO) test -count=1 -p 1 -timeout 40m $(APISERVER_PKGS) $$($(GO) list ./test/... | grep -v -e /test/e2e -e /test/outage -e /test/soak); main=$$?; \
	wait $$beside; other=$$?; cat _work/outage.log; [ ! -f _work/soak.log ] || cat _work/soak.log; \
	[ $$main -eq 0 ] && [ $$other -eq 0 ]

## e2e: the whole product on a real Kubernetes on this machine
## (hack/cluster/up.sh, left running), the chart installed from images built
## from this clone, a real Prometheus scraping the operator (test/e2e). Two
## runs of the suite: first every single-node spec, then the multi-node and
## fault specs (label multinode), which grow the cluster to three nodes, move
## the manager, crash the control plane and go back to one node. Ginkgo
## shuffles top-level specs, so in one run they could land between two
## single-node specs and leave them a cluster in the middle of a change.
## The CSI sidecars the cluster's csi-local class needs are built first
## (csi-sidecars: about 10 minutes on a cold machine, then cached), outside
## the suite's timeout. Needs root.
e2e: setup csi-sidecars
	$(GO) test -count=1 -timeout 40m ./test/e2e/ -ginkgo.v -ginkgo.label-filter '!multinode && !fp'
	$(GO) test -count=1 -timeout 30m ./test/e2e/ -ginkgo.v -ginkgo.label-filter 'multinode'

## test: the whole suite: generated files in sync, vet, lint, every test,
## end to end on a real cluster included; says how long each part took.
test: setup
	@./hack/timed.sh verify vet lint unit integration e2e

## bench: the aggregation benchmarks: decoding and merging 1,000 clients x
## 20 steps of results, JSON against the wire encoding (goal: < 1 s,
## < 500 MB on one core); what one recorded step of a running benchmark
## costs the manager's heap; then the manager's cost per step at 10, 100,
## 1,000 clients and 3,000 (three benchmarks) on a real API server, with
## its scaling table (docs/measurement.md; goal at 1,000: at most 0.5 CPU s
## a step, API reads at most the clients and a constant). About 15 minutes.
bench: setup-runtime k8s-binaries
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x -cpu 1 ./internal/results/
	$(GO) test -run '^$$' -bench StepRecordKept -benchtime 1x ./controllers/
	$(GO) test -run '^$$' -bench ManagerPerStep -benchtime 1x -timeout 60m ./test/heap/

## regression-fp: the regression verdict's false-positive rate and power on
## the real cluster: a rate and a curve schedule on capped volumes, 10
## reruns each of the unchanged volumes, then 2 runs under a cap 15 % lower
## (test/e2e, label fp; figures in _work/regression-fp.json). About 15
## minutes; not part of make test, whose e2e suite runs a shorter version.
## Needs root.
regression-fp: setup
	$(GO) test -count=1 -timeout 60m ./test/e2e/ -ginkgo.v -ginkgo.label-filter 'fp'

## soak: the manager left alone for 30 simulated days (SOAK_DAYS) on a real
## control plane, restarted every simulated day and replaced by a new build
## once, with 20 schedules, long benchmarks, a noisy and a hostile tenant
## (test/soak); prints the checks and the heap and API-request slopes and
## writes _work/soak/result.json. About 2 to 2.5 hours (10 days took 39
## minutes); make test runs one simulated day of it. Needs root.
SOAK_DAYS ?= 30
soak: k8s-binaries
	SOAK_DAYS=$(SOAK_DAYS) $(GO) test -run '^$$' -bench Soak -benchtime 1x -timeout 4h ./test/soak/

## bench-data: record again the real 20-second client result the wire
## benchmarks start from (runs fio for 21 s on /var/tmp).
bench-data: setup-runtime
	$(GO) run ./hack/benchdata

## bench-heap: the manager's peak heap, as a separate process against a real
## kube-apiserver and etcd, with 1,000 clients x 20 steps, with 1,000
## foreign labelled 1 MiB ConfigMaps present, and started among 0, 100 and
## 400 ended runs; fails above 512 MiB (test/heap, docs/security.md).
## About 12 minutes.
bench-heap: k8s-binaries
	$(GO) test -run '^$$' -bench ManagerHeap -benchtime 1x -timeout 30m ./test/heap/

## verify: fail when formatting, go.mod/go.sum or generated files (deepcopy,
## CRDs, RBAC and their copies in the chart) drift from what the tools generate.
verify: generate manifests
	@git diff --exit-code -- api config charts || { echo "generated files drift: run make generate manifests and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config charts)" || { git status --porcelain -- api config charts; echo "untracked generated files: commit them"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting (make fmt)"; exit 1; }
	@cp go.mod /tmp/storagebench-go.mod.bak; cp go.sum /tmp/storagebench-go.sum.bak 2>/dev/null || true
	@$(GO) mod tidy
	@git diff --exit-code -- go.mod go.sum || { echo "go.mod/go.sum drift: run go mod tidy and commit"; exit 1; }

## demo: the README's main command. The OLTP sample on a real Kubernetes on
## this machine (one node; NODES=3: three, the clients spread across them): brings it up (or reuses it), installs the Helm
## chart with the local images, runs the sample scaled to this machine (3
## clients on one shared volume, 4 rate steps of 20 s) with live progress,
## prints the per-step table and writes _work/demo/oltp-bench.png
## (hack/demo.sh). Needs root.
demo: setup
	STORAGEBENCH_NODES=$(NODES) ./hack/demo.sh

## demo-local: the same method without Kubernetes: real fio on a local
## directory, OLTP (8 KiB, 80/20 random), 3 client processes x 2 jobs, curve
## mode (find the maximum, then 10..90 % of it), then the table and summary.
demo-local: setup-runtime build
	./bin/runner local --clients 3 --jobs 2 --profile oltp --curve 10,30,50,70,90 --step-duration 10s --ramp 2s --dir _work/demo-local

## measure: fidelity (a step through the operator vs the same step by plain
## fio on the host, same files) and overhead (wall time from create to
## Complete over the sum of step durations) on the local cluster; prints
## the ratios and writes _work/measure/result.json (hack/measure). Root.
measure: setup
	$(GO) run ./hack/measure

## k8s-binaries: build pinned etcd, kube-apiserver, kube-controller-manager and
## kubectl (or K8S_COMPONENTS="kube-scheduler kubelet ...") into a cache outside
## the clone and print its directory (KUBEBUILDER_ASSETS). The versions live in
## hack/k8s-bin/go.mod and hack/etcd-bin/go.mod; a second run costs nothing.
k8s-binaries:
	@./hack/k8s-binaries.sh $(K8S_COMPONENTS)

## deploy: install the CRD and the operator (config/default: namespace
## storagebench-system) into the cluster of kubectl's current context, with
## the manager image IMG and the client image RUNNER_IMG. KUBECTL=kubectl uses
## yours instead of the pinned one.
deploy: setup
	@set -eu; kubectl="$(KUBECTL)"; [ -n "$$kubectl" ] || kubectl="$$(./hack/k8s-binaries.sh kubectl)/kubectl"; \
	rm -rf _work/deploy; mkdir -p _work/deploy; \
	printf 'resources:\n- ../../config/default\n' >_work/deploy/kustomization.yaml; \
	(cd _work/deploy && ../../$(KUSTOMIZE) edit set image localhost/storagebench-manager=$(IMG)); \
	$(KUSTOMIZE) build _work/deploy | sed -e 's|--runner-image=.*|--runner-image=$(RUNNER_IMG)|' \
		-e 's|\["localhost/storagebench-runner:0.1.0"\]|["$(RUNNER_IMG)"]|' | "$$kubectl" apply --server-side -f -

## undeploy: delete what deploy created, the CRD included, and with it
## every StorageBenchmark of the cluster.
undeploy: setup
	@set -eu; kubectl="$(KUBECTL)"; [ -n "$$kubectl" ] || kubectl="$$(./hack/k8s-binaries.sh kubectl)/kubectl"; \
	$(KUSTOMIZE) build config/default | "$$kubectl" delete --ignore-not-found -f -

## helm-install: install or upgrade the chart as release storagebench in
## storagebench-system, with the images IMG and RUNNER_IMG (repository:tag).
helm-install: setup
	@set -eu; img='$(IMG)'; runner='$(RUNNER_IMG)'; set -x; \
	$(HELM) upgrade --install storagebench $(CHART) --namespace storagebench-system --create-namespace \
		--set image.repository="$${img%:*}" --set image.tag="$${img##*:}" \
		--set runnerImage.repository="$${runner%:*}" --set runnerImage.tag="$${runner##*:}"

## helm-uninstall: remove the release (Helm keeps the CRD and the benchmarks).
helm-uninstall: setup
	$(HELM) uninstall storagebench --namespace storagebench-system

clean:
	rm -rf _work

## csi-sidecars: build the pinned kubernetes-csi sidecars (external-provisioner,
## external-snapshotter with the snapshot-controller, external-resizer) from the
## Go module proxy into a cache outside the clone and print its directory. The
## versions live in hack/csi-sidecars.sh; a second run costs nothing.
## csi-up / csi-down: start (or reuse) / stop the CSI path of the local
## cluster: the test-bed driver hack/csidriver on every node (node 0's also
## serves the controller), the sidecars and the snapshot-controller on node 0,
## the classes csi-local (hack/cluster/csi.sh). cluster-up (and so cluster-install,
## demo and e2e) runs csi-up; cluster-down stops it too.
.PHONY: csi-sidecars csi-up csi-down
csi-sidecars:
	@./hack/csi-sidecars.sh

csi-up:
	@hack/cluster/csi.sh up

csi-down:
	@hack/cluster/csi.sh down
