# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# Shared by hack/cluster/up.sh and down.sh: the work directory's layout and the
# PID-file helpers. Everything of the cluster lives under $W.
W="$(realpath -m "${STORAGEBENCH_CLUSTER_DIR:-$HOME/.cache/storagebench/cluster}")"
CACHE="$(realpath -m "${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}")"
PKI="$W/pki"
RUN="$W/run"     # <daemon>.pid
LOGS="$W/logs"   # <daemon>.log
SOCK="$W/containerd/containerd.sock"
KUBECONFIG_ADMIN="$W/admin.kubeconfig"

log() { echo "cluster: $*" >&2; }
die() {
	log "$*"
	exit 1
}

# pid_of NAME: the PID recorded for NAME if that process still runs the
# recorded binary (a recycled PID does not count); fails otherwise.
pid_of() {
	local f="$RUN/$1.pid" pid exe
	[ -s "$f" ] || return 1
	pid="$(cat "$f")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
	[ "$(basename "${exe% (deleted)}")" = "$1" ] || return 1
	echo "$pid"
}

# stop_pid PID NAME [SECONDS]: SIGTERM, wait up to SECONDS (default 20), SIGKILL.
stop_pid() {
	local pid="$1" name="$2" t="${3:-20}" i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < t * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	log "$name ($pid) ignored SIGTERM for ${t} s; SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# ctr_ ARGS: ctr against this cluster's containerd, namespace k8s.io.
ctr_() { ctr --address "$SOCK" -n k8s.io "$@"; }
