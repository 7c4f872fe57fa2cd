#!/usr/bin/env bash
# Cost of the standard library's sync under control (verify test
# --std-sync) on the module of instrument/testdata/stdsync: the extra
# build (in an empty build cache: first without the overlay, then the
# same test with it, then again), and what a sync.Mutex costs outside a
# run with the overlay linked (BenchmarkIncr, best of REPS).
#
#   REPS=8 bash bench/stdsync_cost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${REPS:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/verify" ./cmd/verify)
mod="$work/m"
mkdir -p "$mod/helper"
cp "$root/instrument/testdata/stdsync/helper/helper.go" "$mod/helper/"
printf 'module stdsynccost\n\ngo 1.25\n' > "$mod/go.mod"
cat > "$mod/incr_test.go" <<'GO'
package stdsynccost

import (
	"testing"

	"stdsynccost/helper"
)

func TestIncr(t *testing.T) {
	var c helper.Counter
	c.Incr()
}

// Two Lock/Unlock pairs of a sync.Mutex in a package not instrumented,
// outside any controlled run.
func BenchmarkIncr(b *testing.B) {
	var c helper.Counter
	for b.Loop() {
		c.Incr()
	}
}
GO
cd "$mod"
build=$("$work/verify" test . --std-sync --keep --no-cache --runs 1 2>&1 | sed -n 's/.*overlay are in //p')
[ -d "$build" ] || { echo "no build directory" >&2; exit 2; }
trap 'rm -rf "$work" "$build"' EXIT
# The same overlay without the files of sync.
grep -v '/src/sync/' "$build/overlay.json" | sed -z 's/,\n\t}/\n\t}/' > "$work/nosync.json"
flags=(-modfile="$build/go.mod" -mod=mod)
export GOCACHE="$work/gocache"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
t() { /usr/bin/time -f "$1: %e s wall, %U+%S s CPU" "${@:2}"; }
t "cold, without the overlay of sync" go test -c -o "$work/nosync.test" -overlay="$work/nosync.json" "${flags[@]}" .
t "then with it" go test -c -o "$work/sync.test" -overlay="$build/overlay.json" "${flags[@]}" .
t "again" go test -c -o "$work/sync.test" -overlay="$build/overlay.json" "${flags[@]}" .
for b in nosync sync; do
  best=$(for _ in $(seq "$reps"); do "$work/$b.test" -test.run '^$' -test.bench Incr -test.benchtime 2000000x | awk '/^BenchmarkIncr/{print $3}'; done | sort -g | head -1)
  echo "BenchmarkIncr, $b: best of $reps: $best ns/op"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
