#!/usr/bin/env bash
# Crashes and restarts one daemon of the cluster of hack/cluster/up.sh, as
# the fault specs of test/e2e do while a benchmark runs: SIGKILL, then the
# same command again with the arguments recorded in $W/run/NAME.args. Prints
# how long it was down, measured here, until its health check answers.
#
#   hack/cluster/restart.sh kube-apiserver|etcd [SECONDS_DOWN]
#
# SECONDS_DOWN (default 0) keeps it stopped that long before the restart.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh
name="${1:-}"
down="${2:-0}"
case "$name" in
kube-apiserver | etcd) ;;
*) die "usage: hack/cluster/restart.sh kube-apiserver|etcd [SECONDS_DOWN]" ;;
esac
[ "$(id -u)" -eq 0 ] || die "hack/cluster/restart.sh needs root"
pid="$(pid_of "$name")" || die "$name is not running"
mapfile -t args <"$RUN/$name.args"
t0=$(date +%s.%N)
kill -KILL "$pid"
for ((i = 0; i < 200; i++)); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.05
done
kill -0 "$pid" 2>/dev/null && die "$name ($pid) still there 10 s after SIGKILL"
sleep "$down"
setsid "${args[@]}" </dev/null >>"$LOGS/$name.log" 2>&1 &
echo "$!" >"$RUN/$name.pid"
kubectl_="$(hack/k8s-binaries.sh kubectl)/kubectl"
# healthy: the API server answers /readyz, which needs etcd too.
healthy() { "$kubectl_" --kubeconfig "$KUBECONFIG_ADMIN" get --raw /readyz >/dev/null 2>&1; }
for ((i = 0; i < 600; i++)); do
	healthy && break
	sleep 0.1
done
healthy || die "$name did not come back in 60 s; logs in $LOGS/$name.log"
log "$(awk -v s="$t0" -v e="$(date +%s.%N)" -v n="$name" 'BEGIN { printf "%s down for %.1f s", n, e - s }')"
