#!/usr/bin/env bash
# Builds pinned Kubernetes binaries and etcd from Go modules into a cache outside
# the clone, keyed by the Kubernetes version, and prints that directory (the only
# line on stdout; progress goes to stderr):
#
#   KUBEBUILDER_ASSETS=$(hack/k8s-binaries.sh)  etcd kube-apiserver kube-controller-manager kubectl
#   hack/k8s-binaries.sh kubelet kube-proxy     only these; also kube-scheduler
#
# The versions live only in hack/k8s-bin/go.mod and hack/etcd-bin/go.mod. A binary
# that exists and reports the pinned version is not rebuilt. Binaries are built
# under a temporary name and renamed into place, so an interrupted build never
# leaves a broken one. Cache: ${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}.
set -euo pipefail
cache="$(realpath -m "${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}")"
cd "$(dirname "$0")"
log() { echo "k8s-binaries: $*" >&2; }

# modver DIR MODULE: the version of MODULE that DIR/go.mod requires.
modver() { awk -v m="$2" '{ sub(/^require /, "") } $1 == m && $2 ~ /^v/ { print $2; exit }' "$1/go.mod"; }
k8s="$(modver k8s-bin k8s.io/kubernetes)"
etcd="$(modver etcd-bin go.etcd.io/etcd/server/v3)"
IFS=. read -r major minor _ <<<"${k8s#v}"
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $p.gitVersion=$k8s -X $p.gitMajor=$major -X $p.gitMinor=$minor"
done

dir="$cache/k8s/$k8s"
mkdir -p "$dir"
tmp="$(mktemp -d "$dir/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# Static binaries, as upstream releases them (upstream links only the kubelet
# dynamically; static here, so all share one build cache and run anywhere).
export GOWORK=off CGO_ENABLED=0

(($#)) || set -- etcd kube-apiserver kube-controller-manager kubectl
for c in "$@"; do
	# What the binary must print, and how to build it.
	want="Kubernetes $k8s" ask=--version mod=k8s-bin pkg="k8s.io/kubernetes/cmd/$c" flags="$ldflags"
	case "$c" in
	kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy) ;;
	kubectl) want="Client Version: $k8s" ask="version --client" ;;
	etcd) want="etcd Version: ${etcd#v}" mod=etcd-bin pkg=go.etcd.io/etcd/server/v3 flags="-s -w" ;;
	*) log "unknown component $c (etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)" && exit 2 ;;
	esac
	# shellcheck disable=SC2086 # $ask is a word list
	if [ -x "$dir/$c" ] && grep -qxF "$want" <<<"$("$dir/$c" $ask 2>/dev/null)"; then
		log "$c: cached"
		continue
	fi
	log "$c: building ($want) ..."
	start=$SECONDS
	(cd "$mod" && go build -trimpath -ldflags "$flags" -o "$tmp/$c" "$pkg") >&2
	mv -f "$tmp/$c" "$dir/$c"
	log "$c: built in $((SECONDS - start)) s"
done
echo "$dir"
