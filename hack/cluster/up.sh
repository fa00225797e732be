#!/usr/bin/env bash
# Brings up a real Kubernetes cluster on this machine, or reuses the one
# already running, and prints the admin kubeconfig's path (the only
# line on stdout; progress goes to stderr):
#
#   export KUBECONFIG=$(hack/cluster/up.sh)
#
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd,
# the kubelet, kube-proxy and rancher/local-path-provisioner run as plain
# processes (no systemd), each recorded in $W/run/<name>.pid; hack/cluster/down.sh
# stops them by PID. Pods get a bridge CNI (cni0, 10.88.0.0/16, nothing
# masqueraded: they reach this machine and each other, nothing outside).
# STORAGEBENCH_NODES=K (1 to 9, default 1) adds nodes 1..K-1 with
# hack/cluster/node.sh, and removes those beyond.
#
# Storage classes: local-path (default; rancher/local-path-provisioner, a
# directory per claim under $W/local-path; its helper pods use the runner
# image), local-shared (the same provisioner, ReadWriteMany: a directory per
# claim under $W/local-shared), local-block (no provisioner, WaitForFirstConsumer; raw block PVs
# on loop devices, STORAGEBENCH_BLOCK_PVS of STORAGEBENCH_BLOCK_SIZE each), and
# the capped classes local-block-qos and local-nv-extreme (STORAGEBENCH_CAPPED_PVS
# each; hack/blkcap, started here too, enforces their caps: docs/local-cluster.md),
# and local-block-pausable (one raw block PV whose backing file lies on a
# filesystem of its own, $W/block/pausable, which a test freezes to pause the
# storage on command), and csi-local (hack/cluster/csi.sh, run last: the
# test-bed CSI driver hack/csidriver on every node, its controller and the
# kubernetes-csi sidecars on node 0, the StorageClass and VolumeSnapshotClass
# csi-local; the sidecars are built once from the Go module proxy by
# hack/csi-sidecars.sh, cached by version).
# Images: the pause image (hack/pause, made with umoci and skopeo) and the
# storagebench manager and runner images (hack/images.sh) are imported into
# containerd; pods use them with imagePullPolicy Never or IfNotPresent.
#
# Work directory: ${STORAGEBENCH_CLUSTER_DIR:-$HOME/.cache/storagebench/cluster}.
# STORAGEBENCH_IMAGES=<dir of hack/images.sh> imports those images instead of
# building the clone's; STORAGEBENCH_NODE_IP overrides the node address.
# Binaries come from hack/k8s-binaries.sh (cached, keyed by version). Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/cluster/lib.sh
. hack/cluster/lib.sh

NODES="${STORAGEBENCH_NODES:-1}"
[[ "$NODES" =~ ^[1-9]$ ]] || die "STORAGEBENCH_NODES=$NODES: 1 to 9 nodes"
BLOCK_PVS="${STORAGEBENCH_BLOCK_PVS:-2}"
BLOCK_SIZE="${STORAGEBENCH_BLOCK_SIZE:-1G}"
CAPPED_PVS="${STORAGEBENCH_CAPPED_PVS:-2}"
QOS_IOPS="${STORAGEBENCH_QOS_IOPS:-1500}"
NV_SIZE="${STORAGEBENCH_NV_SIZE:-64G}"
SERVICE_CIDR=10.0.0.0/24
SERVICE_IP=10.0.0.1
POD_CIDR=10.88.0.0/16
PAUSE_IMAGE=localhost/storagebench-pause:1
HELPER_IMAGE=localhost/storagebench-runner:dev

t_start=$(date +%s.%N)
[ "$(id -u)" -eq 0 ] || die "hack/cluster/up.sh needs root"
command -v go >/dev/null 2>&1 || die "needs Go on the PATH"

# --- Debian packages -------------------------------------------------------
# shellcheck source=hack/lib/debian.sh
. hack/lib/debian.sh
debian_install_missing cluster containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
	iptables:iptables conntrack:conntrack socat:socat umoci:umoci skopeo:skopeo \
	losetup:mount fsfreeze:util-linux openssl:openssl ip:iproute2

# --- binaries --------------------------------------------------------------
BIN="$(hack/k8s-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)"
kubectl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

mkdir -p "$W" "$PKI" "$RUN" "$LOGS" "$W/etcd" "$W/containerd" "$W/cni/net.d" "$W/cni/ipam" \
	"$W/kubelet" "$W/pod-logs" "$W/volume-plugins" "$W/local-path" "$W/block" "$W/manifests"
chmod 0700 "$W/etcd" "$PKI"

# local-path-provisioner, from the Go module proxy (hack/local-path-bin pins it).
lpp_ver="$(awk '$1 == "require" && $2 == "github.com/rancher/local-path-provisioner" { print $3 }' hack/local-path-bin/go.mod)"
LPP="$CACHE/local-path-provisioner/$lpp_ver/local-path-provisioner"
if [ ! -x "$LPP" ]; then
	log "building local-path-provisioner $lpp_ver ..."
	mkdir -p "$(dirname "$LPP")"
	(cd hack/local-path-bin && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" \
		-o "$LPP.tmp" github.com/rancher/local-path-provisioner) >&2
	mv -f "$LPP.tmp" "$LPP"
fi

# --- node address ----------------------------------------------------------
NODE_IP="${STORAGEBENCH_NODE_IP:-$(ip -4 -o addr show scope global | awk '{ split($4, a, "/"); print a[1]; exit }')}"
[ -n "$NODE_IP" ] || die "no non-loopback IPv4 address on this machine; set STORAGEBENCH_NODE_IP"
NODE="$(hostname | tr '[:upper:]' '[:lower:]')"

# --- certificates ----------------------------------------------------------
if [ ! -s "$PKI/ca.crt" ]; then
	log "certificates: new CA"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
		-days 3650 -subj "/CN=storagebench-local-ca" 2>/dev/null
	rm -f "$PKI"/*.san
fi
[ -s "$PKI/sa.key" ] || {
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
}
cert apiserver kube-apiserver "" "IP:$SERVICE_IP,IP:$NODE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,DNS:$NODE"
cert kubelet "system:node:$NODE" system:nodes "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE"
# One client identity for every component (system:masters): a test cluster.
cert admin admin system:masters ""

# kubeconfig FILE: the admin kubeconfig.
cat >"$KUBECONFIG_ADMIN.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: storagebench
  cluster:
    server: https://$NODE_IP:6443
    certificate-authority: $PKI/ca.crt
users:
- name: admin
  user:
    client-certificate: $PKI/admin.crt
    client-key: $PKI/admin.key
contexts:
- name: storagebench
  context: {cluster: storagebench, user: admin}
current-context: storagebench
EOF
mv -f "$KUBECONFIG_ADMIN.tmp" "$KUBECONFIG_ADMIN"

# --- daemons ---------------------------------------------------------------
# etcd does not fsync: a cluster's etcd has disks of its own, and here it
# would share this machine's one disk with the volumes under test, whose
# writes held its WAL fsyncs for up to 2 s and every status update with
# them (a pod seen Running 1-3 s late). A crash of the process loses
# nothing (the page cache keeps its writes); a crash of the machine would.
start etcd "$BIN/etcd" --name storagebench --data-dir "$W/etcd" --unsafe-no-fsync \
	--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster storagebench=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 \
	--quota-backend-bytes 2147483648

start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
	--bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$NODE_IP" \
	--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
	--client-ca-file "$PKI/ca.crt" --authorization-mode Node,RBAC --allow-privileged=true \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--service-account-issuer https://kubernetes.default.svc.cluster.local \
	--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
	--kubelet-client-certificate "$PKI/admin.crt" --kubelet-client-key "$PKI/admin.key" \
	--kubelet-preferred-address-types InternalIP,Hostname \
	--enable-admission-plugins NodeRestriction --profiling=false
wait_for kube-apiserver 90 kubectl get --raw /readyz
t_api=$(date +%s.%N)

start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG_ADMIN" \
	--authentication-kubeconfig "$KUBECONFIG_ADMIN" --authorization-kubeconfig "$KUBECONFIG_ADMIN" \
	--leader-elect=false --bind-address 127.0.0.1 --use-service-account-credentials=true \
	--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
	--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
	--service-cluster-ip-range "$SERVICE_CIDR" --profiling=false
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$KUBECONFIG_ADMIN" \
	--authentication-kubeconfig "$KUBECONFIG_ADMIN" --authorization-kubeconfig "$KUBECONFIG_ADMIN" \
	--leader-elect=false --bind-address 127.0.0.1 --profiling=false

containerd_config "$W/containerd" "$SOCK" "$W/cni" cni0 "$POD_CIDR"
start containerd containerd --config "$W/containerd/config.toml"
wait_for containerd 30 ctr_ version

# Images: the pause image (a static Go program that waits for SIGTERM), then
# the storagebench images. An image already present is not imported again.
has_image() { ctr_ images ls -q | grep -qxF "$1"; }
pause_tar="$CACHE/pause/$(sha256sum hack/pause/main.go | cut -c1-12)/pause.tar"
if [ ! -s "$pause_tar" ]; then
	log "pause image: building"
	tmp="$(mktemp -d)"
	(cd hack/pause && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/pause" .) >&2
	umoci init --layout "$tmp/oci"
	umoci new --image "$tmp/oci:1"
	umoci unpack --image "$tmp/oci:1" "$tmp/bundle" >/dev/null
	install -m 0755 "$tmp/pause" "$tmp/bundle/rootfs/pause"
	umoci repack --image "$tmp/oci:1" "$tmp/bundle"
	umoci config --image "$tmp/oci:1" --config.entrypoint /pause --config.user 65535:65535
	printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$tmp/policy.json"
	mkdir -p "$(dirname "$pause_tar")"
	skopeo --policy "$tmp/policy.json" copy -q "oci:$tmp/oci:1" "docker-archive:$pause_tar.tmp:$PAUSE_IMAGE"
	mv -f "$pause_tar.tmp" "$pause_tar"
	rm -rf "$tmp"
fi
has_image "$PAUSE_IMAGE" || ctr_ images import "$pause_tar" >&2
echo "$pause_tar" >"$W/pause.tar.path"
# STORAGEBENCH_IMAGES: a directory hack/images.sh made earlier (skips the build).
images="${STORAGEBENCH_IMAGES:-}"
[ -n "$images" ] || images="$(hack/images.sh)" || die "hack/images.sh failed"
tag="$(sed -n 's/^tag=//p' "$images/build.txt")"
echo "$tag" >"$W/images.tag" # hack/cluster/install.sh installs the chart with this tag
echo "$images" >"$W/images.dir" # hack/cluster/node.sh imports them too
for name in manager runner; do
	if ! has_image "localhost/storagebench-$name:$tag" || ! has_image "localhost/storagebench-$name:dev"; then
		log "importing localhost/storagebench-$name:$tag (also :dev)"
		ctr_ images import "$images/$name.tar" >&2
	fi
done

kubelet_config "$W/kubelet/config.yaml" kubelet "$SOCK" "$W/pod-logs" "$W/volume-plugins" ""
# The node's Ready must come from this kubelet, not from before a restart.
since="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
pid_of kubelet >/dev/null && since=""
start kubelet "$BIN/kubelet" --config "$W/kubelet/config.yaml" --kubeconfig "$KUBECONFIG_ADMIN" \
	--root-dir "$W/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP"
start kube-proxy "$BIN/kube-proxy" --kubeconfig "$KUBECONFIG_ADMIN" --proxy-mode iptables \
	--conntrack-max-per-core=0 --hostname-override "$NODE" --cluster-cidr "$POD_CIDR" \
	--bind-address "$NODE_IP" --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256

wait_for "node $NODE" 120 node_ready "$NODE" "$since"
t_ready=$(date +%s.%N)

# --- storage ---------------------------------------------------------------
# local-path: the provisioner runs here as a process against the API server;
# the helper pods (mkdir/rm of a claim's directory) use the runner image as root.
# Two classes, one provisioner: local-path (a directory per claim, one node,
# ReadWriteOnce) and local-shared (a directory per claim on a file system
# every pod of this node reaches, so ReadWriteMany: what a Shared benchmark
# with several clients needs; hostPath PVs without node affinity).
mkdir -p "$W/local-shared"
# Node K's local-path volumes are its own, under $W/nodes/nK/local-path.
node_paths=""
for ((k = 1; k < NODES; k++)); do
	node_paths+=", {\"node\": \"$(hack/cluster/node.sh name "$k")\", \"paths\": [\"$W/nodes/n$k/local-path\"]}"
done
cat >"$W/manifests/local-path-config.json" <<EOF
{"storageClassConfigs": {
  "local-path": {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$W/local-path"]}$node_paths]},
  "local-shared": {"sharedFileSystemPath": "$W/local-shared"}
}}
EOF
cat >"$W/manifests/local-path.yaml" <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: local-path-storage
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: local-path-provisioner
  namespace: local-path-storage
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-shared
  annotations:
    defaultVolumeType: hostPath
provisioner: rancher.io/local-path
volumeBindingMode: Immediate
reclaimPolicy: Delete
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-path-config
  namespace: local-path-storage
data:
  config.json: |-
$(sed 's/^/    /' "$W/manifests/local-path-config.json")
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata:
      name: helper-pod
    spec:
      priorityClassName: system-node-critical
      tolerations:
      - key: node.kubernetes.io/disk-pressure
        operator: Exists
        effect: NoSchedule
      securityContext:
        runAsUser: 0
        runAsGroup: 0
      containers:
      - name: helper-pod
        image: $HELPER_IMAGE
        imagePullPolicy: Never
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-block
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-block-pausable
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-block-qos
  # blkcap exports these volumes' disk statistics under Harvest's volume
  # series, labelled with the PV's name (docs/backend-metrics.md).
  annotations: {storagebench.io/backend-volume-names: persistentVolume}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
---
# Static PVs only. The class names Trident's provisioner and a NetApp Volumes
# pool of the Extreme level so that the operator reads it as NetApp Volumes
# and reports the entitlement; nothing here provisions, and its PVs' caps
# are that entitlement (see the PVs below).
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-nv-extreme
provisioner: csi.trident.netapp.io
parameters: {backendType: google-cloud-netapp-volumes, selector: "performance=extreme"}
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
kubectl apply --server-side --force-conflicts -f "$W/manifests/local-path.yaml" >&2
start local-path-provisioner "$LPP" --debug start --kubeconfig "$KUBECONFIG_ADMIN" \
	--namespace local-path-storage --configmap-name local-path-config --config "$W/manifests/local-path-config.json" \
	--service-account-name local-path-provisioner --provisioner-name rancher.io/local-path \
	--helper-image "$HELPER_IMAGE"

# block_pv PV IMAGE SIZE CLASS MODE LABEL [KEY=VALUE]: a loop device on the
# sparse file $W/block/IMAGE.img and a local PV on it (Block, or Filesystem:
# ext4, made here with few inodes so that nothing initialises in the
# background). A loop device gets whatever number is free, so a PV whose
# path changed (after down.sh) and is not bound is made again. The
# annotation (a cap, see hack/blkcap) is set on an existing PV too, so a
# changed cap applies; a changed size needs down.sh --purge.
block_pv() {
	local pv="$1" img="$W/block/$2.img" size="$3" class="$4" mode="$5" label="$6" ann="${7:-}" dev cur fs="" yaml="{}"
	[ -f "$img" ] || truncate -s "$size" "$img"
	dev="$(losetup -j "$img" | awk -F: 'NR == 1 { print $1 }')"
	[ -n "$dev" ] || dev="$(losetup -f --show "$img")"
	echo "$dev" >"$W/block/$2.loop"
	if [ "$mode" = Filesystem ]; then
		blkid -p "$dev" >/dev/null 2>&1 || mkfs.ext4 -q -F -m 0 -N 1024 -J size=4 \
			-E lazy_itable_init=0,lazy_journal_init=0 "$dev" >&2
		fs=", fsType: ext4"
	fi
	cur="$(kubectl get pv "$pv" -o jsonpath='{.spec.local.path} {.status.phase}' 2>/dev/null || true)"
	if [ -n "$cur" ] && [ "${cur%% *}" != "$dev" ]; then
		[ "${cur#* }" != Bound ] || die "PV $pv is bound but its loop device moved to $dev"
		kubectl delete pv "$pv" --wait=true >&2
		cur=""
	elif [ "${cur#* }" = Released ]; then
		# Retain: a released PV keeps its old claim; free it for the next one.
		kubectl patch pv "$pv" --type json -p '[{"op": "remove", "path": "/spec/claimRef"}]' >&2
	fi
	[ -z "$ann" ] || yaml="{${ann%%=*}: \"${ann#*=}\"}"
	[ -z "$cur" ] || [ -z "$ann" ] || kubectl annotate --overwrite pv "$pv" "$ann" >&2
	[ -n "$cur" ] || kubectl apply -f - >&2 <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $pv
  labels: {$label: "true"}
  annotations: $yaml
spec:
  capacity: {storage: $(numfmt --from=iec "$size")}
  volumeMode: $mode
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: $class
  local: {path: $dev$fs}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [$NODE]}
EOF
}
# local-block: plain raw block volumes.
for ((i = 0; i < BLOCK_PVS; i++)); do
	block_pv "local-block-$i" "disk$i" "$BLOCK_SIZE" local-block Block storagebench.io/local-block
done
# The capped classes (docs/local-cluster.md), whose PVs' caps blkcap writes
# into the block cgroup of every container that uses them. local-block-qos:
# raw block volumes of QOS_IOPS I/Os per second each, reads and writes alike
# (an ONTAP QoS max-throughput policy). local-nv-extreme: ext4 volumes of
# NV_SIZE capped at the bytes per second NetApp Volumes' Extreme level
# grants that capacity (128 MiB/s per TiB: capacity / 8192).
for ((i = 0; i < CAPPED_PVS; i++)); do
	block_pv "local-block-qos-$i" "qos$i" "$BLOCK_SIZE" local-block-qos Block storagebench.io/local-capped \
		"storagebench.io/max-iops=$QOS_IOPS"
	block_pv "local-nv-extreme-$i" "nv$i" "$NV_SIZE" local-nv-extreme Filesystem storagebench.io/local-capped \
		"storagebench.io/max-bytes-per-second=$(($(numfmt --from=iec "$NV_SIZE") / 8192))"
done
# local-block-pausable: a storage that pauses on command. The PV's loop
# device writes to a file on an ext4 filesystem of its own (itself on a loop
# device); freezing that filesystem (fsfreeze, FIFREEZE) holds every write
# to the volume until it is thawed, as a takeover holds a LUN's I/O.
PAUSABLE="$W/block/pausable"
if ! mountpoint -q "$PAUSABLE"; then
	img="$W/block/pausable.img"
	# Room for the volume's image, ext4's metadata (1/16) and a small journal.
	sz="$(numfmt --from=iec "$BLOCK_SIZE")"
	[ -f "$img" ] || truncate -s $((sz + sz / 16 + (64 << 20))) "$img"
	dev="$(losetup -j "$img" | awk -F: 'NR == 1 { print $1 }')"
	[ -n "$dev" ] || dev="$(losetup -f --show "$img")"
	blkid -p "$dev" >/dev/null 2>&1 || mkfs.ext4 -q -F -m 0 -N 64 -J size=4 -E lazy_itable_init=0,lazy_journal_init=0 "$dev" >&2
	mkdir -p "$PAUSABLE"
	mount "$dev" "$PAUSABLE"
fi
fsfreeze -u "$PAUSABLE" 2>/dev/null || true # should a test have left it frozen
block_pv local-block-pausable-0 pausable/p0 "$BLOCK_SIZE" local-block-pausable Block storagebench.io/local-pausable
BLKCAP="$W/bin/blkcap"
mkdir -p "$W/bin"
CGO_ENABLED=0 go build -trimpath -o "$BLKCAP.tmp" ./hack/blkcap >&2
mv -f "$BLKCAP.tmp" "$BLKCAP"
start blkcap "$BLKCAP" -kubeconfig "$KUBECONFIG_ADMIN" -node "$NODE" -record "$W/block/caps.jsonl" \
	-harvest-listen 127.0.0.1:0 -harvest-addr-file "$W/block/harvest.addr" \
	-build "$(sha256sum "$BLKCAP" | cut -c1-16)"

# --- more nodes (NODES > 1): hack/cluster/node.sh --------------------------
for ((k = 1; k < NODES; k++)); do
	hack/cluster/node.sh up "$k"
done
for ns in "$W"/nodes/n*/netns; do
	mountpoint -q "$ns" 2>/dev/null || continue
	k="${ns%/netns}"
	k="${k##*/n}"
	((k < NODES)) || hack/cluster/node.sh down "$k"
done

# --- the CSI path: csi-local on every node (hack/cluster/csi.sh) -----------
hack/cluster/csi.sh up
t_end=$(date +%s.%N)
log "$(awk -v s="$t_start" -v a="$t_api" -v r="$t_ready" -v e="$t_end" 'BEGIN {
	printf "up in %.1f s (API server ready at %.1f s, node Ready at %.1f s)", e - s, a - s, r - s }')"
echo "$KUBECONFIG_ADMIN"
