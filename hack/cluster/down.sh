#!/usr/bin/env bash
# Tears down the cluster of hack/cluster/up.sh: stops its daemons by their
# recorded PIDs (SIGTERM, wait, SIGKILL), kills the pods' containers and
# containerd's shims of this work directory, unmounts what the kubelet and
# containerd mounted below it, detaches the loop devices up.sh attached, and
# removes cni0 and kube-proxy's and the kubelet's KUBE-* iptables chains.
# Tolerates a crashed or half-started run; running it twice is harmless.
#
# Keeps the work directory (etcd's data, certificates, the block files), so
# the next up.sh starts warm; `hack/cluster/down.sh --purge` removes it too.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh
purge=false
case "${1:-}" in
--purge) purge=true ;;
"") ;;
*) die "usage: hack/cluster/down.sh [--purge]" ;;
esac
[ "$(id -u)" -eq 0 ] || die "hack/cluster/down.sh needs root"
t0=$(date +%s.%N)

# pids_with ARG: PIDs of processes whose command line holds ARG (our socket
# or work directory), i.e. containerd's shims of this cluster.
pids_with() {
	local p
	for p in /proc/[0-9]*; do
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$1" && echo "${p#/proc/}"
	done
	return 0
}

# The extra nodes of a multi-node cluster (hack/cluster/node.sh), while the
# API server still runs to delete their Node objects.
for ns in "$W"/nodes/n*/netns; do
	mountpoint -q "$ns" 2>/dev/null || continue
	k="${ns%/netns}"
	hack/cluster/node.sh down "${k##*/n}" || true
done
# The kubelet and the provisioner first, so nothing restarts pods.
# Thawed first, should a test have left it frozen: a process writing to
# the pausable volume exits only once its I/O returns.
fsfreeze -u "$W/block/pausable" 2>/dev/null || true
stop 20 local-path-provisioner blkcap kubelet kube-proxy
# The pods' containers: kill every task of our containerd, then its shims
# (they run on after containerd stops).
if pid_of containerd >/dev/null && [ -S "$SOCK" ]; then
	for id in $(ctr_ tasks ls -q 2>/dev/null); do
		ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
	done
	sleep 1
fi
for pid in $(pids_with "-address $SOCK"); do
	[ "$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null)")" = containerd-shim-runc-v2 ] || continue
	log "containerd shim $pid: stopping"
	# The shim's children are the pods' processes.
	for c in $(pgrep -P "$pid" 2>/dev/null || true); do kill -KILL "$c" 2>/dev/null || true; done
	stop_pid "$pid" containerd-shim 5
done
# The CSI path (hack/cluster/csi.sh), if it was started: its processes, and
# the mounts and loop devices of its volumes (the pods are gone).
[ ! -d "$RUN/csi" ] || hack/cluster/csi.sh down --force || true
stop 20 containerd
# kube-apiserver may ignore SIGTERM for a long time; give it 15 s.
stop 15 kube-scheduler kube-controller-manager kube-apiserver
stop 20 etcd

# Mounts below the work directory (pods' volumes, overlay snapshots,
# sandboxes' shm), deepest first.
# The loop devices on the pausable volume's files (up.sh), detached before
# its filesystem is unmounted below.
if mountpoint -q "$W/block/pausable" 2>/dev/null; then
	for img in "$W"/block/pausable/*.img; do
		[ -f "$img" ] || continue
		for dev in $(losetup -j "$img" | cut -d: -f1); do
			log "detaching $dev ($img)"
			losetup -d "$dev" || true
		done
	done
fi
for ((round = 0; round < 3; round++)); do
	mounts="$(awk -v d="$W/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)"
	[ -n "$mounts" ] || break
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done <<<"$mounts"
done
# Network namespaces the CRI left in /run/netns (cni-<uuid>).
for ns in /run/netns/cni-*; do
	[ -e "$ns" ] || continue
	umount "$ns" 2>/dev/null || true
	rm -f "$ns" 2>/dev/null || log "$ns: still mounted somewhere; left"
done

# Loop devices attached to our block files.
for img in "$W"/block/*.img; do
	[ -f "$img" ] || continue
	for dev in $(losetup -j "$img" | cut -d: -f1); do
		log "detaching $dev ($img)"
		losetup -d "$dev" || true
	done
	rm -f "${img%.img}.loop"
done

# Network: the bridge, and the KUBE-* chains (kube-proxy, kubelet) in every
# table, jumps to them first.
ip link delete cni0 2>/dev/null || true
for cmd in iptables ip6tables; do
	command -v "$cmd" >/dev/null 2>&1 || continue
	for table in filter nat mangle; do
		rules="$("$cmd" -t "$table" -S 2>/dev/null)" || continue
		# Rules in built-in chains that jump to a KUBE-* chain.
		args=()
		grep -E '^-A [A-Z]+ .*-j KUBE-' <<<"$rules" | grep -vE '^-A KUBE-' | while read -r rule; do
			# iptables -S quotes comments as a shell would; eval splits them so.
			eval "args=(${rule/#-A/-D})"
			"$cmd" -t "$table" "${args[@]}" 2>/dev/null || true
		done || true
		chains="$(awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }' <<<"$rules")"
		for op in -F -X; do
			while read -r chain; do
				[ -z "$chain" ] || "$cmd" -t "$table" "$op" "$chain" 2>/dev/null || true
			done <<<"$chains"
		done
	done
done
# The CNI's IP allocations belong to the pods just killed.
rm -rf "$W/cni/ipam"

if $purge; then
	if awk -v d="$W/" 'index($2, d) == 1 { f = 1 } END { exit !f }' /proc/self/mounts; then
		die "mounts remain below $W; not removing it"
	fi
	log "removing $W"
	rm -rf --one-file-system "$W"
fi
log "$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "down in %.1f s", e - s }')"
