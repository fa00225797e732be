#!/usr/bin/env bash
# The CSI path of the local cluster: the test-bed driver (hack/csidriver,
# built from the clone) and the kubernetes-csi sidecars (hack/csi-sidecars.sh,
# built from the Go module proxy), as host processes like the other daemons
# of hack/cluster/up.sh, which runs `csi.sh up` on every cluster it brings up
# (hack/cluster/down.sh runs `csi.sh down --force`).
#
#   hack/cluster/csi.sh up      start them (or keep the running ones) and
#                               apply the snapshot CRDs, the CSIDriver, the
#                               StorageClass csi-local and the
#                               VolumeSnapshotClass csi-local
#   hack/cluster/csi.sh down [--delete] [--force]
#                               stop them all by PID (every node's driver);
#                               unmount and detach what the driver left under
#                               its root, unless pods still use its volumes
#                               (--force: then too, their mounts included);
#                               --delete also deletes the CSIDriver and the
#                               two classes (not the CRDs, whose deletion
#                               would delete every snapshot)
#   hack/cluster/csi.sh node-up K
#                               start node K's driver if the CSI path runs
#                               (hack/cluster/node.sh up K calls it)
#   hack/cluster/csi.sh node-down K [--kill]
#                               stop node K's driver, and forget what it
#                               published: its pods are gone (node.sh down K
#                               calls it after removing them); --kill:
#                               SIGKILL it, clean nothing (node.sh kill K)
#
# What runs (PIDs in $W/run/csi/<name>.pid, logs in $W/logs/csi/<name>.log):
# on node 0, csidriver (node and controller services, --mode both),
# csi-provisioner, csi-snapshotter, csi-resizer and the snapshot-controller;
# on each extra node K of hack/cluster/node.sh, one more csidriver
# (csi/nK/csidriver, --mode node, --node-id that node's name) with its socket
# in that node's kubelet plugins dir and its registration socket in that
# node's plugins_registry. Each driver serves its own registration, so the
# kubelet registers it without a node-driver-registrar. The controller
# sidecars stay on node 0. No external-attacher: the CSIDriver says
# attachRequired: false.
#
# No RBAC: every sidecar and the snapshot controller use the cluster's admin
# kubeconfig (system:masters), as the other daemons here do.
#
# The driver's volumes and snapshots live in one tree, $W/csi (next to
# local-path/), which every node's driver shares, as nodes share a network
# storage; so the driver reports no topology and a volume is usable on any
# node. The tree survives down and a cluster restart; down.sh --purge removes
# it. Needs root and a running cluster (hack/cluster/up.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh

DRIVER=csi.storagebench.test
ROOT="$W/csi"                             # the driver's volumes and snapshots
PLUGIN_SOCK="$W/kubelet/plugins/$DRIVER/csi.sock" # the kubelet's --root-dir is $W/kubelet
REG_DIR="$W/kubelet/plugins_registry"
REG_SOCK="$REG_DIR/$DRIVER-reg.sock"
TIMEOUT=300s # a CSI call's deadline: a commanded slow operation may take long
# Stopped in this order: the callers of the driver first.
SIDECARS=(csi/csi-provisioner csi/csi-snapshotter csi/csi-resizer csi/snapshot-controller)
NODE="$(hostname | tr '[:upper:]' '[:lower:]')"
BIN_DRIVER="$W/bin/csidriver"
MAX_NODES=9 # hack/cluster/node.sh's nodes are 1..9

usage() { die "usage: hack/cluster/csi.sh up | down [--delete] [--force] | node-up K | node-down K [--kill]"; }
[ "$(id -u)" -eq 0 ] || die "hack/cluster/csi.sh needs root"

kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# Node K ≥ 1 of hack/cluster/node.sh: its Node name, its kubelet's root
# (--root-dir) and its driver's name here.
node_name() { hack/cluster/node.sh name "$1"; }
node_kubelet() { echo "$W/nodes/n$1/kubelet"; }
node_sock() { echo "$(node_kubelet "$1")/plugins/$DRIVER/csi.sock"; }
node_reg_sock() { echo "$(node_kubelet "$1")/plugins_registry/$DRIVER-reg.sock"; }
# node_running K: node K is up: its network namespace and its kubelet.
node_running() { mountpoint -q "$W/nodes/n$1/netns" 2>/dev/null && pid_of "n$1/kubelet" >/dev/null; }

# started_before PID1 PID2: process PID1 started before PID2 (the start
# time in /proc/PID/stat, field 22; these processes' names have no spaces).
started_before() {
	local a b
	a="$(awk '{ print $22 }' "/proc/$1/stat" 2>/dev/null)" && b="$(awk '{ print $22 }' "/proc/$2/stat" 2>/dev/null)" && [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]
}

# restart_if_rebuilt NAME: a driver running from a replaced binary is stopped
# (start then runs the new one).
restart_if_rebuilt() {
	local pid
	if pid="$(pid_of "$1")" && [[ "$(readlink "/proc/$pid/exe")" == *" (deleted)" ]]; then
		log "$1: rebuilt; restarting"
		stop_pid "$pid" "$1"
	fi
}

# detach_loops_under DIR: detach the loop devices whose backing file lies
# under DIR.
detach_loops_under() {
	losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$1" 'index($2, d) == 1 { print $1 }' | while read -r dev; do
		log "detaching $dev ($(losetup -n -O BACK-FILE "$dev"))"
		losetup -d "$dev" || true
	done
}

# kubelet_loops_under KUBELET_ROOT: detach the loop devices a kubelet
# attached to its block volumes' device files (it holds one on each mapped
# CSI block volume), which a pod killed with its kubelet leaves behind.
kubelet_loops_under() { detach_loops_under "$1/plugins/kubernetes.io/csi/volumeDevices/"; }

# node_up K: node K's driver, node service only, against that node's
# kubelet: its socket in the node's plugins dir, its registration in the
# node's plugins_registry; waits until the node's CSINode lists it.
node_up() {
	local k="$1" name sock
	name="$(node_name "$k")"
	sock="$(node_sock "$k")"
	restart_if_rebuilt "csi/n$k/csidriver"
	start "csi/n$k/csidriver" "$BIN_DRIVER" --endpoint "unix://$sock" --root "$ROOT" --node-id "$name" \
		--driver-name "$DRIVER" --mode node --registration-dir "$(node_kubelet "$k")/plugins_registry"
	wait_for "node $name's csidriver socket" 30 test -S "$sock"
	wait_for "node $name's kubelet registration of $DRIVER" 60 csinode_has "$name" "$DRIVER"
	pid_of "csi/n$k/csidriver" >/dev/null || die "csi/n$k/csidriver exited; see $LOGS/csi/n$k/csidriver.log"
}

# node_down K KILL: stop node K's driver (KILL true: SIGKILL, nothing else).
# Otherwise node K's pods are gone (node.sh down removed them and their
# mounts), so what its driver published is forgotten: its mounts, its loop
# devices and its records (which would keep the controller from deleting
# those volumes).
node_down() {
	local k="$1" kill="$2" pid name f target dev
	if pid="$(pid_of "csi/n$k/csidriver")"; then
		if $kill; then
			kill -KILL "$pid" 2>/dev/null || true
			return 0
		fi
		log "csi/n$k/csidriver: stopping ($pid)"
		stop_pid "$pid" "csi/n$k/csidriver"
	fi
	$kill && return 0
	rm -f "$RUN/csi/n$k/csidriver.pid" "$(node_sock "$k")" "$(node_reg_sock "$k")"
	# The kubelet's loop devices first (on the device files its mounts of
	# the driver's loop devices make), then the driver's.
	kubelet_loops_under "$(node_kubelet "$k")"
	name="$(node_name "$k")"
	for f in "$ROOT"/volumes/*/node-"$name".json; do
		[ -f "$f" ] || continue
		command -v jq >/dev/null 2>&1 || die "needs jq to read the driver's records ($f)"
		while read -r target dev; do
			if [ -n "$target" ] && mountpoint -q "$target" 2>/dev/null; then
				umount "$target" 2>/dev/null || umount -l "$target" || true
			fi
			if [ -n "$dev" ] && [[ "$(losetup -n -O BACK-FILE "$dev" 2>/dev/null)" == "$ROOT/"* ]]; then
				log "node $name: detaching $dev"
				losetup -d "$dev" || true
			fi
		done < <(jq -r '.publications // {} | to_entries[] | "\(.key) \(.value.loop // "")"' "$f")
		log "node $name: forgetting its publications of $(basename "$(dirname "$f")")"
		rm -f "$f"
	done
}

up() {
	KUBECTL="$(hack/k8s-binaries.sh kubectl)/kubectl"
	kubectl get --raw /readyz >/dev/null 2>&1 || die "the cluster's API server does not answer; run make cluster-up first"
	local csi bin="$BIN_DRIVER" pid name k
	csi="$(hack/csi-sidecars.sh)"

	# The driver, built from the clone. An unchanged build leaves the running
	# driver alone; a changed one replaces the binary, and the driver runs
	# from a deleted file: restart it.
	mkdir -p "$W/bin" "$ROOT"
	CGO_ENABLED=0 GOWORK=off nice -n 19 go build -trimpath -o "$bin.tmp" ./hack/csidriver >&2
	if cmp -s "$bin.tmp" "$bin"; then rm -f "$bin.tmp"; else mv -f "$bin.tmp" "$bin"; fi
	restart_if_rebuilt csi/csidriver

	# The snapshot CRDs before the controllers that watch them.
	kubectl apply --server-side --force-conflicts -f "$csi/crd" >&2
	kubectl wait --for condition=established --timeout 60s \
		crd/volumesnapshots.snapshot.storage.k8s.io crd/volumesnapshotcontents.snapshot.storage.k8s.io \
		crd/volumesnapshotclasses.snapshot.storage.k8s.io >/dev/null

	start csi/csidriver "$bin" --endpoint "unix://$PLUGIN_SOCK" --root "$ROOT" --node-id "$NODE" \
		--driver-name "$DRIVER" --mode both --registration-dir "$REG_DIR"
	wait_for "csidriver's socket" 30 test -S "$PLUGIN_SOCK"
	# A sidecar older than the driver was connected to a driver since
	# stopped (rebuilt, crashed): it exits when it notices, at its next
	# call, which may be much later. Stopped now, start runs it again.
	local sidecar driver
	driver="$(pid_of csi/csidriver)"
	for sidecar in csi/csi-provisioner csi/csi-snapshotter csi/csi-resizer; do
		if pid="$(pid_of "$sidecar")" && started_before "$pid" "$driver"; then
			log "$sidecar: older than the driver; restarting"
			stop_pid "$pid" "$sidecar"
		fi
	done

	# --kube-api-qps/--kube-api-burst: the sidecars' and the snapshot
	# controller's own client rate limit, 5 requests a second by default.
	# A snapshot costs the snapshot controller about ten requests, so at 4
	# at once it queued on its own limit for about 0.7 s per snapshot, which
	# the operations benchmark then timed as the storage's. The test bed's
	# figures are to be the driver's commanded times (docs/operations.md).
	local rate=(--kube-api-qps 100 --kube-api-burst 200)
	local common=(--csi-address "$PLUGIN_SOCK" --kubeconfig "$KUBECONFIG_ADMIN" --leader-election=false --timeout "$TIMEOUT" "${rate[@]}")
	# --extra-create-metadata: the PVC's (or the VolumeSnapshot's) name and
	# namespace reach the driver as parameters. The driver has no topology
	# (no VOLUME_ACCESSIBILITY_CONSTRAINTS), so the provisioner ignores it.
	start csi/csi-provisioner "$csi/csi-provisioner" "${common[@]}" --extra-create-metadata
	start csi/csi-snapshotter "$csi/csi-snapshotter" "${common[@]}" --extra-create-metadata
	start csi/csi-resizer "$csi/csi-resizer" "${common[@]}"
	start csi/snapshot-controller "$csi/snapshot-controller" --kubeconfig "$KUBECONFIG_ADMIN" --leader-election=false "${rate[@]}"

	kubectl apply --server-side --force-conflicts -f hack/cluster/csi/ >&2
	# The kubelet registers the driver through its plugins_registry socket.
	wait_for "the kubelet's registration of $DRIVER" 60 csinode_has "$NODE" "$DRIVER"
	# Every other node's driver: one per running node, none for a node gone.
	local nodes="$NODE"
	for ((k = 1; k <= MAX_NODES; k++)); do
		if node_running "$k"; then
			node_up "$k"
			nodes+=", $(node_name "$k")"
		elif pid_of "csi/n$k/csidriver" >/dev/null; then
			node_down "$k" false
		fi
	done
	sleep 1
	for name in csi/csidriver "${SIDECARS[@]}"; do
		pid_of "$name" >/dev/null || die "$name exited; see $LOGS/$name.log"
	done
	log "CSI: driver $DRIVER on $nodes (controller on $NODE), StorageClass and VolumeSnapshotClass csi-local; logs in $LOGS/csi/"
}

# csinode_has NODE DRIVER: NODE's CSINode lists DRIVER.
csinode_has() {
	kubectl get csinode "$1" -o jsonpath='{.spec.drivers[*].name}' | tr ' ' '\n' | grep -qxF "$2"
}

down() {
	local f target dev
	# The sidecars all at once (SIGTERM, then wait for each), then every
	# node's driver the same way: the extra nodes' (whatever their node's
	# state), then node 0's.
	stop 20 "${SIDECARS[@]}"
	local drivers=() k
	for ((k = 1; k <= MAX_NODES; k++)); do
		[ ! -f "$RUN/csi/n$k/csidriver.pid" ] || drivers+=("csi/n$k/csidriver")
	done
	drivers+=(csi/csidriver)
	stop 20 "${drivers[@]}"
	rmdir "$RUN"/csi/n[1-9] 2>/dev/null || true
	# A driver that did not stop cleanly leaves its sockets; a stale
	# registration socket would have the kubelet try it again and again.
	rm -f "$PLUGIN_SOCK" "$REG_SOCK"
	for ((k = 1; k <= MAX_NODES; k++)); do
		rm -f "$(node_sock "$k")" "$(node_reg_sock "$k")"
	done

	# What the driver published and nothing unpublished yet: pods still
	# using its volumes, or a crash. Left alone unless --force: the driver's
	# records name these mounts and loop devices, and a driver started again
	# (csi.sh up) unpublishes them when the kubelet asks, while pods still
	# running keep their volumes. Torn out (--force), a pod loses its
	# volume under it; the driver, started again, takes the loop device it
	# finds gone as detached, so the pod can still end.
	local published=()
	for f in "$ROOT"/volumes/*/node-*.json; do
		[ -f "$f" ] || continue
		command -v jq >/dev/null 2>&1 || die "needs jq to read the driver's records ($f)"
		while read -r target; do
			[ -z "$target" ] || published+=("$target")
		done < <(jq -r '.publications // {} | keys[]' "$f")
	done
	if ((${#published[@]})) && ! $force; then
		log "the driver's volumes are still published at ${#published[@]} paths (pods using them):"
		printf '  %s\n' "${published[@]}" >&2
		log "left mounted and attached; delete those pods with the driver up, or run csi.sh down --force"
		return 0
	fi
	# Loop devices: first the kubelets' on the block volumes' device files
	# (their paths are bind mounts of the driver's loop devices: once
	# unmounted, a loop device no longer names them).
	kubelet_loops_under "$W/kubelet"
	for ((k = 1; k <= MAX_NODES; k++)); do
		[ ! -d "$(node_kubelet "$k")" ] || kubelet_loops_under "$(node_kubelet "$k")"
	done
	for target in "${published[@]}"; do
		if mountpoint -q "$target" 2>/dev/null; then
			log "unmounting $target (still published)"
			umount "$target" 2>/dev/null || umount -l "$target" || true
		fi
	done
	# The driver's loop devices first where their file is on a memory
	# volume's tmpfs: that tmpfs is busy while they hold it, and once it is
	# lazily unmounted their file's path no longer lies under the root.
	detach_loops_under "$ROOT/"
	# Mounts below the driver's root, deepest first.
	awk -v d="$ROOT/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r target; do
		log "unmounting $target"
		umount "$target" 2>/dev/null || umount -l "$target" || true
	done
	# Then any the driver's mounts still held.
	detach_loops_under "$ROOT/"

	if $delete; then
		KUBECTL="$(hack/k8s-binaries.sh kubectl)/kubectl"
		kubectl delete --ignore-not-found -f hack/cluster/csi/ >&2
	fi
}

delete=false force=false
case "${1:-}" in
up)
	[ $# -eq 1 ] || usage
	up
	;;
node-up)
	if [ $# -ne 2 ] || [[ ! "$2" =~ ^[1-9]$ ]]; then usage; fi
	# Only when the CSI path runs (up starts every running node's driver).
	if pid_of csi/csidriver >/dev/null; then
		KUBECTL="$(hack/k8s-binaries.sh kubectl)/kubectl"
		node_up "$2"
	fi
	;;
node-down)
	[[ "${2:-}" =~ ^[1-9]$ ]] || usage
	case "${3:-}" in
	"") node_down "$2" false ;;
	--kill) node_down "$2" true ;;
	*) usage ;;
	esac
	;;
down)
	shift
	for a; do
		case "$a" in
		--delete) delete=true ;;
		--force) force=true ;;
		*) usage ;;
		esac
	done
	down
	;;
*) usage ;;
esac
