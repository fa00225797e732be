#!/usr/bin/env bash
# Runs make targets in order and says how long each took, also when one
# fails (the one that failed is the last line): `make test` uses it.
set -u
cd "$(dirname "$0")/.."
rows=()
status=0
for target in "$@"; do
	start=$(date +%s)
	if make --no-print-directory "$target"; then result=ok; else result=FAILED; status=1; fi
	rows+=("$(printf '%-12s %6d s  %s' "$target" $(($(date +%s) - start)) "$result")")
	[ "$status" -eq 0 ] || break
done
echo "make test: time per part"
printf '  %s\n' "${rows[@]}"
exit "$status"
