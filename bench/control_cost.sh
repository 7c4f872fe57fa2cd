#!/usr/bin/env bash
# Cost of controlled schedules on a small ants case: the instrumented
# build (first in an empty build cache, then cached) and controlled runs
# per second. Needs the module proxy or a module cache with ants v2.12.1.
#
#   bash bench/control_cost.sh [RUNS]
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
export GOCACHE="$work/gocache"
t0=$(date +%s.%N)
"$work/verify" test . --instrument github.com/panjf2000/ants/v2/... --runs 1 -q
t1=$(date +%s.%N)
"$work/verify" test . --instrument github.com/panjf2000/ants/v2/... --runs 1 -q
t2=$(date +%s.%N)
"$work/verify" test . --instrument github.com/panjf2000/ants/v2/... --runs "$runs" -q --json > report.json
python3 - "$t0" "$t1" "$t2" <<'PY'
import json, sys
t0, t1, t2 = map(float, sys.argv[1:])
r = json.load(open("report.json"))
o = r["tests"][0]
print(f"instrumented build + 1 run, empty build cache: {t1-t0:.1f} s")
print(f"instrumented build + 1 run, cached:            {t2-t1:.1f} s")
print(f"{o['runs']} controlled runs of TestSmall in {o['seconds']:.2f} s: {o['runs']/o['seconds']:.0f} runs/s, {o['steps']} steps in the last run")
PY
