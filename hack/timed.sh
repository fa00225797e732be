#!/usr/bin/env bash
# Runs make targets in order and says how long each took, also when one
# fails (the one that failed is the last line): `make test` uses it. Under
# a part that ran Ginkgo suites it lists the slowest specs, from the rows
# the suites leave in _work/spec-times (test/spectimes).
set -u
export LC_ALL=C # the times' decimal point, whatever the locale
cd "$(dirname "$0")/.."
times=_work/spec-times
slowest=${SLOWEST_SPECS:-6}
rows=()
status=0
for target in "$@"; do
	rm -rf "$times"
	start=$(date +%s)
	if make --no-print-directory "$target"; then result=ok; else result=FAILED; status=1; fi
	rows+=("$(printf '%-12s %6d s  %s' "$target" $(($(date +%s) - start)) "$result")")
	if compgen -G "$times/*.tsv" >/dev/null; then
		while IFS=$'\t' read -r secs suite text; do
			rows+=("$(printf '    %6.0f s  %s: %.90s' "$secs" "$suite" "$text")")
		done < <(sort -t $'\t' -k1,1 -rn "$times"/*.tsv | head -n "$slowest")
	fi
	[ "$status" -eq 0 ] || break
done
echo "make test: time per part (under a part, its slowest specs)"
printf '  %s\n' "${rows[@]}"
exit "$status"
