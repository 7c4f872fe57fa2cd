#!/usr/bin/env bash
# Non-test lines of Go per package of this module (the files `go list`
# names, _test.go files left out), largest first; with a LIMIT, exit 1 if
# a package is over it.
#
#   bash bench/pkgsize.sh          # every package
#   bash bench/pkgsize.sh 4000     # and fail if one is over 4,000
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-0}
sizes=$(go list -f '{{.Dir}} {{join .GoFiles " "}} {{join .IgnoredGoFiles " "}}' ./... |
  while IFS=' ' read -r dir files; do
    files=$(printf '%s\n' $files | grep -v '_test\.go$' || true)
    [ -n "$files" ] || continue
    printf '%6d %s\n' "$(cd "$dir" && cat $files | wc -l)" "${dir#"$PWD"/}"
  done | sort -rn)
printf '%s\n' "$sizes"
[ "$limit" -gt 0 ] || exit 0
awk -v l="$limit" '$1 > l { bad = 1 } END { exit bad }' <<<"$sizes"
