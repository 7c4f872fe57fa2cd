#!/usr/bin/env bash
# Cost of controlled schedules on a small ants case: the instrumented
# build (in an empty build cache, first, cached) and controlled runs per
# second. Needs the module proxy or a module cache with ants v2.12.1.
#
#   REPS=3 bash bench/control_cost.sh [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$root/examples/poolcheck/repro/go.mod" "$root/examples/poolcheck/repro/go.sum" .
sed -i 's#^module .*#module antscost#' go.mod
cat > small_test.go <<'GO'
package antscost

import (
	"sync"
	"testing"

	"github.com/panjf2000/ants/v2"
)

// Two workers, four tasks, Release.
func TestSmall(t *testing.T) {
	p, err := ants.NewPool(2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range 4 {
		wg.Add(1)
		if err := p.Submit(func() { mu.Lock(); n++; mu.Unlock(); wg.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	p.Release()
	if n != 4 {
		t.Fatalf("%d tasks ran", n)
	}
}
GO
(cd "$root" && go build -o "$work/verify" ./cmd/verify)
# Three costs, each REPS times (median printed, wall and CPU seconds):
#   cold:   empty go build cache (the standard library compiled too) and
#           no kept instrumented build;
#   first:  go's build cache as a plain `go test` of the package leaves it
#           (what a user has), no kept instrumented build;
#   cached: the same instrumented build again.
reps=${REPS:-3}
verify=("$work/verify" test . --instrument github.com/panjf2000/ants/v2 --runs 1 -q)
timed() { # label: append "wall cpu" to $work/$label
	/usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >/dev/null
	awk '{printf "%s %.2f\n", $1, $2+$3}' "$work/t" >> "$work/$label"
}
for i in $(seq "$reps"); do
	export GOCACHE="$work/gocache.$i" XDG_CACHE_HOME="$work/xdg.c$i"
	label=cold timed "${verify[@]}"
	export XDG_CACHE_HOME="$work/xdg.f$i"
	rm -rf "$GOCACHE"
	go test -count=1 -run '^$' . >/dev/null
	label=first timed "${verify[@]}"
	label=cached timed "${verify[@]}"
done
"$work/verify" test . --instrument github.com/panjf2000/ants/v2 --runs "$runs" -q --json > report.json
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
for label in ("cold", "first", "cached"):
    rows = [tuple(map(float, l.split())) for l in open(f"{work}/{label}")]
    wall = statistics.median(r[0] for r in rows)
    cpu = statistics.median(r[1] for r in rows)
    print(f"instrumented build + 1 run, {label:6s}: median {wall:5.1f} s wall, {cpu:5.1f} s CPU ({len(rows)} runs: " + ", ".join(f"{r[0]:.1f}" for r in rows) + " s)")
r = json.load(open("report.json"))
o = r["tests"][0]
print(f"{o['runs']} controlled runs of TestSmall in {o['seconds']:.2f} s: {o['runs']/o['seconds']:.0f} runs/s, {o['steps']} steps in the last run")
PY
