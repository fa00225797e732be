#!/usr/bin/env bash
# Builds the pinned kubernetes-csi sidecars and the snapshot controller from
# the Go module proxy into a cache outside the clone, keyed by their versions,
# copies the VolumeSnapshot CRDs next to them, and prints that directory (the
# only line on stdout; progress goes to stderr):
#
#   CSI=$(hack/csi-sidecars.sh)   csi-provisioner csi-snapshotter snapshot-controller
#                                 csi-resizer, crd/*.yaml
#
# hack/cluster/csi.sh runs them next to the test-bed driver (hack/csidriver,
# which that script builds from the clone). The versions live here, below,
# and only here.
#
# Each sidecar is built from a copy of its own module as the module proxy
# serves it, with that module's go.mod and go.sum: its pinned dependencies
# and its replace directives, as upstream builds it (`go install
# module/cmd/x@version` refuses a module with replace directives, which all
# three have). external-snapshotter replaces its client module with ./client,
# which its module zip lacks (a nested module): the client module of the same
# version stands in for it. A binary that exists and reports its pinned
# version is not rebuilt. Binaries are built under a temporary name and
# renamed into place. Cache: ${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}.
set -euo pipefail

# --- the versions (the only place they are written) -------------------------
PROVISIONER=github.com/kubernetes-csi/external-provisioner/v5@v5.3.0
SNAPSHOTTER=github.com/kubernetes-csi/external-snapshotter/v8@v8.2.0
SNAPSHOT_CLIENT=github.com/kubernetes-csi/external-snapshotter/client/v8@v8.2.0 # the CRDs, and ./client
RESIZER=github.com/kubernetes-csi/external-resizer@v1.14.0

cache="$(realpath -m "${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}")"
log() { echo "csi-sidecars: $*" >&2; }
export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# The cache directory is keyed by every version of the set.
key="provisioner-${PROVISIONER##*@}_snapshotter-${SNAPSHOTTER##*@}_resizer-${RESIZER##*@}"
dir="$cache/csi/$key"
mkdir -p "$dir"
tmp="$(mktemp -d "$dir/.build.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# download MODULE@VERSION: the module's directory in the module cache. A
# refused version is asked for once more, then the build fails: no other
# version stands in for it.
download() {
	local out try d
	for try in 1 2; do
		if out="$(cd "$tmp" && go mod download -json "$1" 2>&1)" &&
			d="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$out")" && [ -d "$d" ]; then
			echo "$d"
			return 0
		fi
		log "$1: the module proxy ($(go env GOPROXY)) refused it (try $try): $out"
	done
	log "$1: not available; not building another version in its place"
	return 1
}

# build NAME MODULE@VERSION: NAME from MODULE's cmd/NAME.
build() {
	local name="$1" mv="$2" ver="${2##*@}" src mod start
	if [ -x "$dir/$name" ] && [ "$("$dir/$name" --version 2>/dev/null)" = "$dir/$name $ver" ]; then
		log "$name: cached"
		return 0
	fi
	log "$name $ver: building ..."
	start=$SECONDS
	src="$tmp/src/${mv//[\/@]/_}" # one copy per module, shared by its commands
	if [ ! -d "$src" ]; then
		mod="$(download "$mv")"
		mkdir -p "$tmp/src"
		cp -r "$mod" "$src"
		chmod -R u+w "$src"
		if [ "$mv" = "$SNAPSHOTTER" ]; then
			mod="$(download "$SNAPSHOT_CLIENT")"
			(cd "$src" && go mod edit -replace "${SNAPSHOT_CLIENT%@*}=$mod")
		fi
	fi
	(cd "$src" && nice -n 19 go build -trimpath -ldflags "-s -w -X main.version=$ver" \
		-o "$tmp/$name" "./cmd/$name") >&2
	mv -f "$tmp/$name" "$dir/$name"
	log "$name: built in $((SECONDS - start)) s"
}

build csi-provisioner "$PROVISIONER"
build csi-snapshotter "$SNAPSHOTTER"
build snapshot-controller "$SNAPSHOTTER"
build csi-resizer "$RESIZER"

# The CRDs the snapshot controller and the snapshotter serve (the group
# snapshot ones are left out: their feature gate is off).
if [ ! -s "$dir/crd/.done" ]; then
	crd="$(download "$SNAPSHOT_CLIENT")/config/crd"
	mkdir -p "$dir/crd"
	for k in volumesnapshotclasses volumesnapshotcontents volumesnapshots; do
		install -m 0644 "$crd/snapshot.storage.k8s.io_$k.yaml" "$dir/crd/"
	done
	echo "$SNAPSHOT_CLIENT" >"$dir/crd/.done"
fi
echo "$dir"
