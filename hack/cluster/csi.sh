#!/usr/bin/env bash
# The CSI path of the local cluster: the test-bed driver (hack/csidriver,
# built from the clone) and the kubernetes-csi sidecars (hack/csi-sidecars.sh,
# built from the Go module proxy), as host processes on node 0, like the
# other daemons of hack/cluster/up.sh.
#
#   hack/cluster/csi.sh up      start them (or keep the running ones) and
#                               apply the snapshot CRDs, the CSIDriver, the
#                               StorageClass csi-local and the
#                               VolumeSnapshotClass csi-local
#   hack/cluster/csi.sh down [--delete] [--force]
#                               stop them by PID; unmount and detach what the
#                               driver left under its root, unless pods still
#                               use its volumes (--force: then too, their
#                               mounts included); --delete also deletes the
#                               CSIDriver and the two classes (not the CRDs,
#                               whose deletion would delete every snapshot)
#
# What runs (PIDs in $W/run/csi/<name>.pid, logs in $W/logs/csi/<name>.log):
# csidriver (node and controller services; its socket in the kubelet's
# plugins dir, its registration socket in the kubelet's plugins_registry, so
# the kubelet registers it without a node-driver-registrar), csi-provisioner,
# csi-snapshotter, csi-resizer and the snapshot-controller. No
# external-attacher: the CSIDriver says attachRequired: false.
#
# No RBAC: every sidecar and the snapshot controller use the cluster's admin
# kubeconfig (system:masters), as the other daemons here do.
#
# The driver's volumes and snapshots live under $W/csi (next to local-path/),
# which survives down and a cluster restart; down.sh --purge removes it.
# Needs root and a running cluster (hack/cluster/up.sh).
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

usage() { die "usage: hack/cluster/csi.sh up | down [--delete] [--force]"; }
[ "$(id -u)" -eq 0 ] || die "hack/cluster/csi.sh needs root"

kubectl() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

up() {
	KUBECTL="$(hack/k8s-binaries.sh kubectl)/kubectl"
	kubectl get --raw /readyz >/dev/null 2>&1 || die "the cluster's API server does not answer; run make cluster-up first"
	local csi bin="$W/bin/csidriver" pid name
	csi="$(hack/csi-sidecars.sh)"

	# The driver, built from the clone. An unchanged build leaves the running
	# driver alone; a changed one replaces the binary, and the driver runs
	# from a deleted file: restart it.
	mkdir -p "$W/bin" "$ROOT"
	CGO_ENABLED=0 GOWORK=off nice -n 19 go build -trimpath -o "$bin.tmp" ./hack/csidriver >&2
	if cmp -s "$bin.tmp" "$bin"; then rm -f "$bin.tmp"; else mv -f "$bin.tmp" "$bin"; fi
	if pid="$(pid_of csi/csidriver)" && [[ "$(readlink "/proc/$pid/exe")" == *" (deleted)" ]]; then
		log "csi/csidriver: rebuilt; restarting"
		stop_pid "$pid" csi/csidriver
	fi

	# The snapshot CRDs before the controllers that watch them.
	kubectl apply --server-side --force-conflicts -f "$csi/crd" >&2
	kubectl wait --for condition=established --timeout 60s \
		crd/volumesnapshots.snapshot.storage.k8s.io crd/volumesnapshotcontents.snapshot.storage.k8s.io \
		crd/volumesnapshotclasses.snapshot.storage.k8s.io >/dev/null

	start csi/csidriver "$bin" --endpoint "unix://$PLUGIN_SOCK" --root "$ROOT" --node-id "$NODE" \
		--driver-name "$DRIVER" --mode both --registration-dir "$REG_DIR"
	wait_for "csidriver's socket" 30 test -S "$PLUGIN_SOCK"

	local common=(--csi-address "$PLUGIN_SOCK" --kubeconfig "$KUBECONFIG_ADMIN" --leader-election=false --timeout "$TIMEOUT")
	# --extra-create-metadata: the PVC's (or the VolumeSnapshot's) name and
	# namespace reach the driver as parameters. The driver has no topology
	# (no VOLUME_ACCESSIBILITY_CONSTRAINTS), so the provisioner ignores it.
	start csi/csi-provisioner "$csi/csi-provisioner" "${common[@]}" --extra-create-metadata
	start csi/csi-snapshotter "$csi/csi-snapshotter" "${common[@]}" --extra-create-metadata
	start csi/csi-resizer "$csi/csi-resizer" "${common[@]}"
	start csi/snapshot-controller "$csi/snapshot-controller" --kubeconfig "$KUBECONFIG_ADMIN" --leader-election=false

	kubectl apply --server-side --force-conflicts -f hack/cluster/csi/ >&2
	# The kubelet registers the driver through its plugins_registry socket.
	wait_for "the kubelet's registration of $DRIVER" 60 csinode_has "$DRIVER"
	sleep 1
	for name in csi/csidriver "${SIDECARS[@]}"; do
		pid_of "$name" >/dev/null || die "$name exited; see $LOGS/$name.log"
	done
	log "CSI: driver $DRIVER on $NODE, StorageClass and VolumeSnapshotClass csi-local; logs in $LOGS/csi/"
}

# csinode_has DRIVER: node 0's CSINode lists DRIVER.
csinode_has() {
	kubectl get csinode "$NODE" -o jsonpath='{.spec.drivers[*].name}' | tr ' ' '\n' | grep -qxF "$1"
}

down() {
	local name pid f target dev
	# The sidecars all at once (SIGTERM, then wait for each), then the driver.
	for name in "${SIDECARS[@]}"; do
		if pid="$(pid_of "$name")"; then
			log "$name: stopping ($pid)"
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	for name in "${SIDECARS[@]}" csi/csidriver; do
		if pid="$(pid_of "$name")"; then
			[ "$name" != csi/csidriver ] || log "$name: stopping ($pid)"
			stop_pid "$pid" "$name"
		fi
		rm -f "$RUN/$name.pid"
	done
	# A driver that did not stop cleanly leaves its sockets; a stale
	# registration socket would have the kubelet try it again and again.
	rm -f "$PLUGIN_SOCK" "$REG_SOCK"

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
	for target in "${published[@]}"; do
		if mountpoint -q "$target" 2>/dev/null; then
			log "unmounting $target (still published)"
			umount "$target" 2>/dev/null || umount -l "$target" || true
		fi
	done
	# Mounts below the driver's root, deepest first.
	awk -v d="$ROOT/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r target; do
		log "unmounting $target"
		umount "$target" 2>/dev/null || umount -l "$target" || true
	done
	# Loop devices on the driver's block volumes and snapshots.
	losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$ROOT/" 'index($2, d) == 1 { print $1 }' | while read -r dev; do
		log "detaching $dev ($(losetup -n -O BACK-FILE "$dev"))"
		losetup -d "$dev" || true
	done

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
