#!/usr/bin/env bash
# The extra nodes of a multi-node cluster (make cluster-up NODES=3, which is
# STORAGEBENCH_NODES=3 hack/cluster/up.sh): node 0 is
# this machine (hack/cluster/up.sh); node K ≥ 1 is a containerd, a kubelet and
# a kube-proxy of its own, all three in a network namespace of its own
# (bind-mounted on $W/nodes/nK/netns), which a veth joins to the bridge
# sbnodes0 on this machine:
#
#   sbnodes0 10.99.0.1/24 ── veth sbnK ── nK: eth0 10.99.0.(10+K), pods 10.89.K.0/24 on cni0
#
# This machine routes 10.89.K.0/24 to node K, so pod traffic between nodes
# crosses a node's interface as in a cluster; each node forwards between its
# pods and its eth0 (ip_forward inside its own namespace), and this machine
# between the nodes (ip_forward, which node 0's bridge CNI turns on anyway).
# Nothing is masqueraded, so nothing from a pod gets an answer from outside.
# Needs cgroup v1, as node 0's blkcap does. A node's pods
# live in the cgroup /storagebench-nK, its files under $W/nodes/nK (kubelet
# root, containerd, pod logs, local-path volumes), its daemons' PIDs under
# $W/run/nK/. Its Node object is <this machine's name>-nK. When the CSI path
# runs (hack/cluster/csi.sh), node K has its own CSI driver (node service),
# which up starts, down stops and kill kills with the node's daemons.
#
#   hack/cluster/node.sh up K      start node K (or reuse it) and wait for Ready
#   hack/cluster/node.sh down K    stop node K, clean up what it left, delete its Node
#   hack/cluster/node.sh kill K    lose node K: SIGKILL its kubelet, kube-proxy,
#                                  containerd and every container of it, clean
#                                  nothing (a node that lost power)
#   hack/cluster/node.sh name K    print node K's Node name
#
# up needs the control plane of hack/cluster/up.sh running; up.sh calls it for
# STORAGEBENCH_NODES > 1. Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh

cmd="${1:-}"
k="${2:-}"
[[ "$k" =~ ^[1-9]$ ]] || die "usage: hack/cluster/node.sh up|down|kill|name K (K in 1..9)"
[ "$(id -u)" -eq 0 ] || die "hack/cluster/node.sh needs root"
[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] || die "hack/cluster/node.sh needs cgroup v1 (a node's pods get a cgroupRoot in every v1 hierarchy)"

PAUSE_IMAGE=localhost/storagebench-pause:1
BRIDGE=sbnodes0
BRIDGE_IP=10.99.0.1
IP="10.99.0.$((10 + k))"
SUBNET="10.89.$k.0/24"
CLUSTER_CIDR=10.88.0.0/15 # node 0's 10.88.0.0/16 and every node K's 10.89.K.0/24
N="$W/nodes/n$k"
# The namespace is a file of the node's own, not `ip netns add`: that would
# turn /run/netns into a bind mount of itself, and the CRI could then no
# longer remove the network namespaces of pods that ran before.
NSF="$N/netns"
NSOCK="$N/containerd/containerd.sock"
CGROOT="/storagebench-n$k"
NAME="$(hostname | tr '[:upper:]' '[:lower:]')-n$k"
BIN() { echo "$(hack/k8s-binaries.sh kubelet kube-proxy kubectl)/$1"; }
kubectl() { "$(BIN kubectl)" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
nctr() { ctr --address "$NSOCK" -n k8s.io "$@"; }
# in_ns CMD...: CMD in the node's network namespace only (not `ip netns
# exec`, whose own mount namespace would hide the kubelet's mounts from
# containerd).
in_ns() { nsenter --net="$NSF" "$@"; }

# cgroup_dirs: the node's cgroup in every cgroup v1 hierarchy.
cgroup_dirs() {
	local h
	for h in /sys/fs/cgroup/*/; do
		[ "$(basename "$h")" = unified ] || echo "${h%/}$CGROOT"
	done
}

# kill_node: SIGKILL the node's daemons and containers (their shims and
# everything under them).
kill_node() {
	local name pid p
	for name in kubelet kube-proxy containerd; do
		if pid="$(pid_of "n$k/$name")"; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	for p in /proc/[0-9]*; do
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "-address $NSOCK " || continue
		pid="${p#/proc/}"
		for c in $(pgrep -P "$pid" 2>/dev/null || true); do kill -KILL "$c" 2>/dev/null || true; done
		kill -KILL "$pid" 2>/dev/null || true
	done
	# Whatever still runs in the node's pod cgroups.
	for d in $(cgroup_dirs); do
		[ -d "$d" ] || continue
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
	done
}

case "$cmd" in
name) echo "$NAME" ;;

kill)
	log "node $NAME: lost (SIGKILL to its kubelet, kube-proxy, containerd, CSI driver and containers)"
	kill_node
	hack/cluster/csi.sh node-down "$k" --kill || true
	;;

down)
	log "node $NAME: stopping"
	for name in kubelet kube-proxy; do
		if pid="$(pid_of "n$k/$name")"; then stop_pid "$pid" "n$k/$name"; fi
	done
	# The pods' network namespaces (/run/netns/cni-…, shared with node 0's)
	# are found from the node's sandboxes before their containerd goes.
	pod_netns=()
	if pid_of "n$k/containerd" >/dev/null && [ -S "$NSOCK" ]; then
		for id in $(nctr containers ls -q 2>/dev/null); do
			ns="$(nctr containers info "$id" 2>/dev/null | grep -o '/var/run/netns/cni-[0-9a-f-]*' | head -n 1)" || true
			[ -z "$ns" ] || pod_netns+=("$ns")
		done
		for id in $(nctr tasks ls -q 2>/dev/null); do nctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
		sleep 1
	fi
	kill_node
	rm -f "$RUN/n$k"/*.pid
	# Its CSI driver, and what that published to the pods just removed,
	# while their mounts still name the files its loop devices are on.
	hack/cluster/csi.sh node-down "$k" || true
	for ((round = 0; round < 3; round++)); do
		mounts="$(awk -v d="$N/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)"
		[ -n "$mounts" ] || break
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done <<<"$mounts"
	done
	# Empty cgroups, deepest first.
	for d in $(cgroup_dirs); do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	ip route del "$SUBNET" 2>/dev/null || true
	ip link del "sbn$k" 2>/dev/null || true
	for ns in "${pod_netns[@]}"; do
		umount "$ns" 2>/dev/null || true
		rm -f "$ns" 2>/dev/null || true
	done
	umount "$NSF" 2>/dev/null || true
	rm -f "$NSF"
	rm -rf "$N/cni/ipam"
	if [ -s "$KUBECONFIG_ADMIN" ] && kubectl get --raw /readyz >/dev/null 2>&1; then
		kubectl delete node "$NAME" --ignore-not-found --wait=false >&2 || true
	fi
	# The bridge goes with the last node.
	nodes_left=false
	for f in "$W"/nodes/n*/netns; do mountpoint -q "$f" 2>/dev/null && nodes_left=true; done
	$nodes_left || ip link del "$BRIDGE" 2>/dev/null || true
	;;

up)
	[ -s "$KUBECONFIG_ADMIN" ] && kubectl get --raw /readyz >/dev/null 2>&1 ||
		die "node $NAME: the control plane is not up (hack/cluster/up.sh)"
	t0=$(date +%s.%N)
	# --- network -------------------------------------------------------
	if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
		ip link add "$BRIDGE" type bridge
		ip addr add "$BRIDGE_IP/24" dev "$BRIDGE"
	fi
	ip link set "$BRIDGE" up
	mkdir -p "$N"
	if ! mountpoint -q "$NSF"; then
		touch "$NSF"
		unshare --net="$NSF" true
	fi
	if ! ip link show "sbn$k" >/dev/null 2>&1; then
		ip link add "sbn$k" type veth peer name eth0 netns "$NSF"
		ip link set "sbn$k" master "$BRIDGE" up
	fi
	in_ns ip link set lo up
	in_ns ip addr replace "$IP/24" dev eth0
	in_ns ip link set eth0 up
	in_ns ip route replace default via "$BRIDGE_IP"
	in_ns sysctl -qw net.ipv4.ip_forward=1
	sysctl -qw net.ipv4.ip_forward=1
	ip route replace "$SUBNET" via "$IP" dev "$BRIDGE"

	# --- cgroups and files ---------------------------------------------
	for d in $(cgroup_dirs); do
		mkdir -p "$d"
		case "$d" in
		/sys/fs/cgroup/cpuset/*)
			cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$d/cpuset.cpus"
			cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
			;;
		esac
	done
	mkdir -p "$N/kubelet" "$N/pod-logs" "$N/volume-plugins" "$N/local-path"
	cert "kubelet-n$k" "system:node:$NAME" system:nodes "IP:$IP,DNS:$NAME"
	containerd_config "$N/containerd" "$NSOCK" "$N/cni" cni0 "$SUBNET"
	kubelet_config "$N/kubelet/config.yaml" "kubelet-n$k" "$NSOCK" "$N/pod-logs" "$N/volume-plugins" "$CGROOT"

	# --- daemons -------------------------------------------------------
	start "n$k/containerd" nsenter --net="$NSF" containerd --config "$N/containerd/config.toml"
	wait_for "node $NAME's containerd" 30 nctr version
	has_image() { nctr images ls -q | grep -qxF "$1"; }
	tag="$(cat "$W/images.tag")"
	has_image "$PAUSE_IMAGE" || nctr images import "$(cat "$W/pause.tar.path")" >&2
	for image in manager runner; do
		if ! has_image "localhost/storagebench-$image:$tag" || ! has_image "localhost/storagebench-$image:dev"; then
			log "node $NAME: importing localhost/storagebench-$image:$tag"
			nctr images import "$(cat "$W/images.dir")/$image.tar" >&2
		fi
	done
	since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	pid_of "n$k/kubelet" >/dev/null && since=""
	start "n$k/kubelet" nsenter --net="$NSF" "$(BIN kubelet)" --config "$N/kubelet/config.yaml" \
		--kubeconfig "$KUBECONFIG_ADMIN" --root-dir "$N/kubelet" --hostname-override "$NAME" --node-ip "$IP"
	start "n$k/kube-proxy" nsenter --net="$NSF" "$(BIN kube-proxy)" --kubeconfig "$KUBECONFIG_ADMIN" \
		--proxy-mode iptables --conntrack-max-per-core=0 --hostname-override "$NAME" --cluster-cidr "$CLUSTER_CIDR" \
		--bind-address "$IP" --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
	wait_for "node $NAME" 120 node_ready "$NAME" "$since"
	# Its CSI driver, when the CSI path runs (otherwise csi.sh up starts it).
	hack/cluster/csi.sh node-up "$k"
	log "$(awk -v s="$t0" -v e="$(date +%s.%N)" -v n="$NAME" 'BEGIN { printf "node %s Ready in %.1f s", n, e - s }')"
	;;
*) die "usage: hack/cluster/node.sh up|down|kill|name K" ;;
esac
