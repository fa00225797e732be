#!/usr/bin/env bash
# Installs what storagebench's build, tests and demo need on a fresh Debian
# machine: fio (the load generator, Debian package), Debian's prometheus
# package (promtool tests the chart's rules) and pinned Go tools, built once
# into a cache outside the clone keyed by their version and Go's (a fresh
# clone links them and costs nothing), linked under bin/ (ignored by git):
# golangci-lint, controller-gen, helm and kustomize.
# Cache: ${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}/tools.
#
#   hack/setup.sh          fio, prometheus and the Go tools
#   hack/setup.sh runtime  fio only (what the demo needs)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"

GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
CONTROLLER_TOOLS_VERSION="${CONTROLLER_TOOLS_VERSION:-v0.18.0}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
# kustomize v5.8 needs Go 1.27; v5.7.1 is the last that builds with Go 1.26.
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.7.1}"

need_apt=()
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
# promtool (test/chart's rule tests); not needed by the demo.
[ "$what" = runtime ] || command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
if ((${#need_apt[@]})); then
	echo "setup: installing Debian packages: ${need_apt[*]}"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
echo "setup: $(fio --version)"
[ "$what" = runtime ] && exit 0

mkdir -p bin
tools="$(realpath -m "${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}")/tools/$(go env GOVERSION)"
mkdir -p "$tools"
# go_tool NAME MODULE/CMD VERSION: build a pinned Go tool once into the
# cache as NAME-VERSION (built in a temporary directory and renamed into
# place, so an interrupted build leaves none) and point bin/NAME at it.
go_tool() {
	local name="$1" pkg="$2" version="$3" target="$tools/$1-$3"
	if [ ! -x "$target" ]; then
		echo "setup: building $name $version (once per machine)"
		local tmp
		tmp="$(mktemp -d "$tools/.build.XXXXXX")"
		GOBIN="$tmp" go install "$pkg@$version"
		mv "$tmp/$name" "$target"
		rm -rf "$tmp"
	fi
	ln -sfn "$target" "bin/$name"
}
go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$GOLANGCI_LINT_VERSION"
go_tool controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen "$CONTROLLER_TOOLS_VERSION"
go_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
