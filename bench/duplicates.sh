#!/usr/bin/env bash
# Counts the pairs of places that repeat six or more lines, with the
# `duplicates` command (not part of this module; it must be on PATH), twice:
#
#   1. on the tree as it is;
#   2. on a copy in which each spec of a Go import block stands on a line
#      `import SPEC` of its own, line numbers unchanged.
#
# The command's help says that import lines are passed over. It passes over
# a one-line `import "fmt"`, but not the specs inside `import ( ... )`, so
# two files whose blocks share six or more specs in a row count as a pair
# (cmd/verify/check_test.go:4-12 ~ traces/picture_test.go:4-12 was one, both
# sides nothing but specs). The second count is the one the help describes.
#
#   bash bench/duplicates.sh            # the two counts
#   MOST=200 bash bench/duplicates.sh   # and the rows of both
set -euo pipefail
cd "$(dirname "$0")/.."
command -v duplicates >/dev/null || { echo "duplicates is not on PATH" >&2; exit 2; }
most=${MOST:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard | while IFS= read -r f; do
  [ -f "$f" ] && printf '%s\n' "$f"
done | tar -cf - -T - | tar -xf - -C "$tmp"
find "$tmp" -name '*.go' | while IFS= read -r f; do
  awk '/^import \($/ { inb = 1; print; next }
       inb && /^\)/ { inb = 0; print; next }
       inb && NF && $1 !~ /^\/\// { sub(/^[ \t]+/, ""); print "import " $0; next }
       { print }' "$f" >"$f.tmp" && mv "$f.tmp" "$f"
done
count() {
  if [ "$most" -gt 0 ]; then
    nice -n 19 duplicates --most "$most" --seconds 120
  else
    nice -n 19 duplicates --most 1 --seconds 120 | head -1
  fi
}
echo "as the tree is:"
count
echo "import specs passed over:"
(cd "$tmp" && count)
