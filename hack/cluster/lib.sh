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
# recorded binary with the recorded arguments (a recycled PID does not
# count); fails otherwise. NAME may name a node's daemon, n1/kubelet: the
# binary is its last part.
pid_of() {
	local f="$RUN/$1.pid" pid exe
	[ -s "$f" ] || return 1
	pid="$(cat "$f")"
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
	[ "$(basename "${exe% (deleted)}")" = "${1##*/}" ] || return 1
	# The same command line too: several nodes run a kubelet each. The
	# recorded arguments may start with what exec'd it (nsenter ...).
	local cmd
	cmd="$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline")" || return 1
	[ ! -s "$RUN/$1.args" ] || [[ "$(cat "$RUN/$1.args")" == *"$cmd" ]] || return 1
	echo "$pid"
}

# stop SECONDS NAME...: the recorded processes NAME (pid_of), SIGTERM to all of them at once, then wait for each
# (SIGKILL after SECONDS).
stop() {
	local t="$1" name pid
	shift
	for name; do
		if pid="$(pid_of "$name")"; then
			log "$name: stopping ($pid)"
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	for name; do
		if pid="$(pid_of "$name")"; then
			stop_pid "$pid" "$name" "$t"
		fi
		rm -f "$RUN/$name.pid"
	done
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

# cert NAME CN O SANS: a key and a certificate signed by the cluster CA.
cert() {
	local name="$1" cn="$2" o="$3" sans="$4" ext="$PKI/$1.ext"
	[ -s "$PKI/$name.crt" ] && [ "$(cat "$PKI/$name.san" 2>/dev/null)" = "$sans" ] && return 0
	openssl genrsa -out "$PKI/$name.key" 2048 2>/dev/null
	openssl req -new -key "$PKI/$name.key" -subj "/CN=$cn${o:+/O=$o}" -out "$PKI/$name.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$sans" ] || echo "subjectAltName=$sans"
	} >"$ext"
	openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 3650 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
	echo "$sans" >"$PKI/$name.san"
	rm -f "$PKI/$name.csr" "$ext"
}
# start NAME BINARY ARGS...: start BINARY in its own session unless NAME runs
# with the same arguments (otherwise it is restarted); records its PID in
# $RUN/NAME.pid, its arguments in $RUN/NAME.args and its output in
# $LOGS/NAME.log.
start() {
	local name="$1" pid args
	shift
	args="$(printf '%s\n' "$@")"
	if pid="$(pid_of "$name")"; then
		if [ "$args" = "$(cat "$RUN/$name.args" 2>/dev/null)" ]; then
			log "$name: running ($pid)"
			return 0
		fi
		log "$name: its arguments changed; restarting"
		stop_pid "$pid" "$name"
	fi
	log "$name: starting"
	mkdir -p "$(dirname "$RUN/$name")" "$(dirname "$LOGS/$name")"
	setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
	echo "$!" >"$RUN/$name.pid"
	echo "$args" >"$RUN/$name.args"
}
# wait_for WHAT SECONDS CMD...: until CMD succeeds.
wait_for() {
	local what="$1" t="$2" i
	shift 2
	for ((i = 0; i < t * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "$what not ready after $t s; logs in $LOGS"
}


# node_ready NODE SINCE: the Node is Ready, with a heartbeat since SINCE
# (its kubelet's start; "" for any). Uses the caller's kubectl function.
node_ready() {
	local r
	r="$(kubectl get node "$1" -o jsonpath='{range .status.conditions[?(@.type=="Ready")]}{.status} {.lastHeartbeatTime}{end}')" || return 1
	[ "${r%% *}" = True ] && [[ ! "${r#* }" < "$2" ]]
}

# containerd_config DIR SOCK CNI BRIDGE SUBNET: a containerd's config
# (DIR/config.toml, everything of it under DIR) and its pod network (CNI/net.d,
# allocations in CNI/ipam): one bridge, BRIDGE, with SUBNET. Pods run as the
# kubelet asks except for two things this VM and the benchmarks need:
# restrict_oom_score_adj (no CAP_SYS_RESOURCE here; otherwise every runc create
# fails) and device_ownership_from_security_context (a raw block device is
# chowned to the pod's runAsUser/runAsGroup so non-root clients can open it).
# No ipMasq: pods reach this machine and each other only.
containerd_config() {
	local dir="$1" sock="$2" cni="$3" bridge="$4" subnet="$5"
	mkdir -p "$dir" "$cni/net.d" "$cni/ipam"
	cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[debug]
  address = "$sock.debug"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  device_ownership_from_security_context = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$cni/net.d"
EOF
	cat >"$cni/net.d/10-storagebench.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "storagebench",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$subnet"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$cni/ipam"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
	# The pod's lo: containerd's CRI brings it up with this loopback plugin.
	cat >"$cni/net.d/99-loopback.conf" <<EOF
{"cniVersion": "1.0.0", "name": "lo", "type": "loopback"}
EOF
}

# kubelet_config FILE CERT SOCK PODLOGS PLUGINS CGROUPROOT: a kubelet's
# configuration, serving with $PKI/CERT.{crt,key}; CGROUPROOT ("" for the
# machine's root) keeps the pods of one node apart from another's.
kubelet_config() {
	local file="$1" crt="$2" sock="$3" podlogs="$4" plugins="$5" cgroot="$6"
	cat >"$file" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/$crt.crt
tlsPrivateKeyFile: $PKI/$crt.key
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
podLogsDir: $podlogs
volumePluginDir: $plugins
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
readOnlyPort: 0
serializeImagePulls: false
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 110
EOF
	[ -z "$cgroot" ] || echo "cgroupRoot: $cgroot" >>"$file"
}
