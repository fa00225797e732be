#!/usr/bin/env bash
# Builds the two images, storagebench-manager (Dockerfile) and
# storagebench-runner (Dockerfile.runner), on this machine without any
# container registry, and writes them as docker-archive tarballs that
# `ctr -n k8s.io images import` (or `docker load`) accepts. Prints the
# directory holding them (the only line on stdout; progress goes to stderr):
#
#   dir=$(hack/images.sh)
#   $dir/manager.tar  localhost/storagebench-manager:<tag> (also :dev)
#   $dir/runner.tar   localhost/storagebench-runner:<tag>  (also :dev)
#   $dir/build.txt    what was built, how and how long it took
#
# <tag> (the directory's name) is dev-<hash of every input>: the files the
# Dockerfiles copy (as .dockerignore selects them), the Dockerfiles, this
# script, the Go toolchain and the base recipe. A second run with the same
# inputs finds the tarballs and builds nothing.
#
# How: buildah builds the real Dockerfiles (chroot isolation, a throw-away
# storage directory, no daemon) against two local base images passed as build
# arguments: BASE_IMAGE, a Debian minbase root file system made with
# debootstrap from the host's Debian mirror (cached, see BASE_RECIPE), and
# GO_IMAGE, that base plus the host's Go toolchain. Go modules come from the
# host's module cache, mounted read-only (GOPROXY=off inside the build), and
# the host's Go build cache is mounted so rebuilds compile only what changed.
# fio comes from Debian's mirror through apt in the runner's RUN step.
#
# Needs root. Installs the Debian packages it needs (buildah, skopeo, umoci,
# debootstrap). Cache: ${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}/images.
# Knobs: DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR (default: the host's apt
# sources), STORAGEBENCH_BUILDAH_DRIVER (overlay, or vfs on an overlayfs).
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD"
cache="$(realpath -m "${STORAGEBENCH_CACHE:-$HOME/.cache/storagebench}")/images"
log() { echo "images: $*" >&2; }
die() {
	log "$*"
	exit 1
}

SUITE=bookworm
# Bump when make_base changes, so every cache rebuilds its base.
BASE_RECIPE=1

[ "$(id -u)" -eq 0 ] || die "hack/images.sh needs root (debootstrap, buildah's storage, chroot)"
command -v go >/dev/null 2>&1 || die "hack/images.sh needs Go on the PATH (the builder image gets the host's toolchain)"

# shellcheck source=hack/lib/debian.sh
. hack/lib/debian.sh
debian_install_missing images buildah:buildah skopeo:skopeo umoci:umoci debootstrap:debootstrap

arch="$(dpkg --print-architecture)"
goroot="$(go env GOROOT)"
gover="$(go env GOVERSION)"
base_key="debian-$SUITE-$arch-r$BASE_RECIPE"

# The tag: a hash of every input. The Go sources are the files of this
# module's packages that the two binaries are built from.
inputs() {
	printf '%s\n' go.mod go.sum Dockerfile Dockerfile.runner .dockerignore hack/images.sh
	# shellcheck disable=SC2016 # a Go template, not shell
	GOOS=linux CGO_ENABLED=0 go list -deps -f '{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}' ./cmd/manager ./cmd/runner | sed -n "s|^$src/||p"
}
hash="$({
	inputs | LC_ALL=C sort | xargs -d '\n' sha256sum
	echo "$gover $(go env GOARCH) $base_key"
} | sha256sum | cut -c1-12)"
tag="dev-$hash"
dir="$cache/$tag"
if [ -f "$dir/manager.tar" ] && [ -f "$dir/runner.tar" ] && [ -f "$dir/build.txt" ]; then
	log "$tag: cached"
	echo "$dir"
	exit 0
fi

start=$SECONDS
mkdir -p "$cache/base"
work="$(mktemp -d "$cache/.build.XXXXXX")"
buildlog="$work/build.log"
B=()

# unmount_below DIR: unmount whatever is mounted below DIR (deepest first);
# fails when something stays, so DIR is never deleted across a mount.
unmount_below() {
	local m
	awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done
	! awk -v d="$1/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts
}
cleanup() {
	local rc=$?
	if ((rc)) && [ -s "$buildlog" ]; then
		cp "$buildlog" "$cache/failed-$tag.log" || true
		log "failed; last lines of $cache/failed-$tag.log:"
		tail -n 40 "$buildlog" >&2 || true
	fi
	if ((${#B[@]})); then
		"${B[@]}" rm --all >/dev/null 2>&1 || true
	fi
	if unmount_below "$work"; then
		rm -rf --one-file-system "$work"
	else
		log "mounts remain below $work; left it in place"
	fi
}
trap cleanup EXIT

# host_repo SUFFIX: the host's apt repository serving a suite that ends in
# SUFFIX (empty: the main suite).
host_repo() {
	# shellcheck disable=SC2016 # apt expands these, not the shell
	apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
		awk -v s="$1" '!found && ((s == "" && $1 !~ /-/) || (s != "" && $1 ~ ("-" s "$"))) { print $2; found = 1 }'
}

# make_base: a Debian minbase root file system like the official slim image
# (no documentation, man pages or translations; security updates applied),
# as a tarball in the cache.
make_base() {
	local mirror security r="$work/rootfs" t0=$SECONDS
	mirror="${DEBIAN_MIRROR:-$(host_repo '')}"
	security="${DEBIAN_SECURITY_MIRROR:-$(host_repo security)}"
	[ -n "$mirror" ] || die "no Debian mirror in the host's apt sources; set DEBIAN_MIRROR"
	log "base: debootstrap --variant=minbase $SUITE (first run only, about a minute) ..."
	debootstrap --variant=minbase "$SUITE" "$r" "$mirror" >>"$buildlog" 2>&1
	{
		echo "deb $mirror $SUITE main"
		echo "deb $mirror $SUITE-updates main"
		[ -z "$security" ] || echo "deb $security $SUITE-security main"
	} >"$r/etc/apt/sources.list"
	cat >"$r/etc/dpkg/dpkg.cfg.d/excludes" <<-'EOF'
		# As in Debian's slim images: no documentation (but the copyright
		# files), man pages or translations.
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/man/*
		path-exclude /usr/share/groff/*
		path-exclude /usr/share/info/*
		path-exclude /usr/share/lintian/*
		path-exclude /usr/share/linda/*
		path-exclude /usr/share/locale/*
	EOF
	find "$r/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
	find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete
	rm -rf "$r"/usr/share/{man,groff,info,lintian,linda,locale}/*
	chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		sh -c 'apt-get update -qq && apt-get upgrade -y -qq && apt-get clean' >>"$buildlog" 2>&1
	unmount_below "$r" || die "mounts remain below $r"
	# No apt lists, logs, device nodes or the host's name and resolver: the
	# container runtime provides /dev, /etc/hostname and /etc/resolv.conf.
	rm -rf "$r"/var/lib/apt/lists/* "$r"/var/cache/apt/*.bin "$r"/var/log/apt "$r"/var/log/dpkg.log "$r"/var/log/bootstrap.log
	find "$r/dev" -mindepth 1 -delete
	rm -f "$r/etc/hostname" "$r/etc/resolv.conf"
	tar -C "$r" --numeric-owner -cf "$work/base.tar" .
	mv -f "$work/base.tar" "$cache/base/$base_key.tar"
	rm -rf --one-file-system "$r"
	log "base: $base_key in $((SECONDS - t0)) s"
}
[ -f "$cache/base/$base_key.tar" ] || make_base

# buildah, with a storage of its own that goes away with $work.
driver="${STORAGEBENCH_BUILDAH_DRIVER:-}"
if [ -z "$driver" ]; then
	driver=overlay
	[ "$(stat -f -c %T "$cache")" != overlayfs ] || driver=vfs
fi
B=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver "$driver")
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
base_image="localhost/storagebench-build/debian:$SUITE-r$BASE_RECIPE"
go_image="localhost/storagebench-build/golang:${gover#go}"

t0=$SECONDS
c="$("${B[@]}" from scratch)"
m="$("${B[@]}" mount "$c")"
tar -C "$m" --numeric-owner -xpf "$cache/base/$base_key.tar"
"${B[@]}" umount "$c" >/dev/null
"${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$c"
"${B[@]}" commit -q --rm "$c" "$base_image" >/dev/null
# What the Go image offers: the toolchain in /usr/local/go, GOPATH /go.
c="$("${B[@]}" from --pull=never "$base_image")"
m="$("${B[@]}" mount "$c")"
cp -a "$goroot" "$m/usr/local/go"
"${B[@]}" umount "$c" >/dev/null
"${B[@]}" config --env GOPATH=/go --env GOTOOLCHAIN=local \
	--env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--workingdir /go "$c"
"${B[@]}" commit -q --rm "$c" "$go_image" >/dev/null
log "base images: $base_image, $go_image ($driver storage) in $((SECONDS - t0)) s"

# Every module the build needs, in the host's module cache.
go mod download >&2
modcache="$(go env GOMODCACHE)"
gocache="$(go env GOCACHE)"
bud=(bud --isolation chroot --pull=never
	--build-arg "GO_IMAGE=$go_image" --build-arg "BASE_IMAGE=$base_image"
	--build-arg GOPROXY=off --build-arg TARGETOS=linux --build-arg "TARGETARCH=$(go env GOARCH)"
	--volume "$modcache:/go/pkg/mod:ro")
[ "$gocache" = off ] || [ -z "$gocache" ] || bud+=(--volume "$gocache:/root/.cache/go-build")

mkdir -p "$work/out"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$work/policy.json"
sizes=()
for name in manager runner; do
	file=Dockerfile
	[ "$name" = manager ] || file="Dockerfile.$name"
	image="localhost/storagebench-$name"
	t0=$SECONDS
	log "$name: buildah bud -f $file (log: $buildlog) ..."
	"${B[@]}" "${bud[@]}" -f "$file" -t "$image:$tag" "$src" >>"$buildlog" 2>&1
	skopeo --policy "$work/policy.json" copy -q \
		"containers-storage:[$driver@$work/storage+$work/run]$image:$tag" \
		"docker-archive:$work/out/$name.tar:$image:$tag" --additional-tag "$image:dev" >>"$buildlog" 2>&1
	size="$("${B[@]}" images --format '{{.Size}}' "$image:$tag")"
	sizes+=("${name}_size=$size")
	log "$name: $image:$tag ($size) in $((SECONDS - t0)) s"
done

{
	echo "tag=$tag"
	echo "manager=localhost/storagebench-manager:$tag"
	echo "runner=localhost/storagebench-runner:$tag"
	echo "path=buildah $(buildah --version | awk '{ print $3 }') bud --isolation chroot, $driver storage"
	echo "go=$gover"
	echo "base=$base_key"
	printf '%s\n' "${sizes[@]}"
	if commit="$(git rev-parse --short HEAD 2>/dev/null)"; then
		git diff --quiet HEAD -- 2>/dev/null || commit+=" (with uncommitted changes)"
		echo "commit=$commit"
	fi
	echo "seconds=$((SECONDS - start))"
} >"$work/out/build.txt"
cp "$buildlog" "$work/out/build.log"
if ! mv -T "$work/out" "$dir" 2>/dev/null; then
	[ -f "$dir/build.txt" ] || die "could not move the images to $dir"
	log "$tag: built meanwhile by another run; keeping that one"
fi
log "$tag: done in $((SECONDS - start)) s"
# Keep the three newest builds, and no work directory of a killed run.
find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'dev-*' -printf '%T@ %p\n' | sort -rn | tail -n +4 |
	while read -r _ old; do
		log "removing the old build $(basename "$old")"
		rm -rf --one-file-system "$old"
	done
find "$cache" -mindepth 1 -maxdepth 1 -type d -name '.build.*' -mmin +1440 -print |
	while read -r old; do
		! unmount_below "$old" || rm -rf --one-file-system "$old"
	done
echo "$dir"
