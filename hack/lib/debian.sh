# shellcheck shell=bash
# Sourced by hack/images.sh and hack/cluster/up.sh (both run as root).

# debian_install_missing WHO SPEC...: installs, without recommends, the
# Debian package of every SPEC ("command:package", or "/path:package") whose
# command is not on the PATH or whose path does not exist; WHO prefixes the
# message.
debian_install_missing() {
	local who="$1" spec cmd need=()
	shift
	for spec in "$@"; do
		cmd="${spec%%:*}"
		if [[ "$cmd" == /* ]]; then
			[ -e "$cmd" ] && continue
		else
			command -v "$cmd" >/dev/null 2>&1 && continue
		fi
		need+=("${spec#*:}")
	done
	((${#need[@]})) || return 0
	echo "$who: installing Debian packages: ${need[*]}" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}
