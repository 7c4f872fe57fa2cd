#!/usr/bin/env bash
# Controlled pool cases per second on ants v2.11.4 (examples/poolcheck's
# adapter): TestAntsSmall (cases of up to 16 tasks from 2 submitters) and
# TestAnts (up to 256 tasks from 8, skewed small), each case one run of
# the controlled runtime in the session's bubble. Measured on the
# instrumented test binary that `verify test` builds, so the build is not
# counted: wall-clock cases/s, cases per CPU-second (user+sys of the
# process: what one core does), yield points (steps) per case, and CPU
# µs per step.
#
#   bash bench/poolctl.sh [CASES]      # default 2000 cases per test
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cases=${1:-2000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/verify" ./cmd/verify
cp -r examples/poolcheck/ants "$work/"
cp examples/poolcheck/go.mod examples/poolcheck/go.sum "$work/"
sed -i "s#=> ../..#=> $root#" "$work/go.mod"
cd "$work"
./verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --run 'TestAntsSmall$' --runs 1 --keep -q 2>"$work/stderr" >/dev/null || true
build=$(sed -n 's/^verify test: the rewritten files and the overlay are in //p' "$work/stderr")
[ -n "$build" ] || { cat "$work/stderr"; exit 2; }
flags=(-overlay="$build/overlay.json")
[ -f "$build/go.mod" ] && flags+=(-modfile="$build/go.mod" -mod=mod)
go test -c -o "$work/ants.test" "${flags[@]}" ./ants
rm -rf "$build"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for test in TestAntsSmall TestAnts; do
  rm -f "$work/report.jsonl"
  (cd ants && EXECSPEC_RUNS=$cases EXECSPEC_REPORT="$work/report.jsonl" /usr/bin/time -o "$work/time" -f '%U %S %e' "$work/ants.test" -test.run "^$test\$" >/dev/null 2>&1) || true
  t=$(tail -1 "$work/time")
  python3 - "$test" "$cases" "$t" "$work/report.jsonl" <<'PY'
import json, sys
test, cases, t, path = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
o = json.loads(open(path).readline())
user, sys_, wall = map(float, t)
cpu = user + sys_
runs, steps = o["runs"], o.get("total_steps", 0)
print(f"{test:14s} {runs} cases  {runs/o['seconds']:6.0f}/s wall  {runs/cpu:6.0f} per CPU-second  "
      f"{steps/runs:6.0f} steps/case  {cpu*1e6/max(steps,1):5.2f} µs/step  (cpu {cpu:.2f}s, wall {wall:.2f}s)"
      + ("" if not o.get("failed_run") else f"  FINDING: {o.get('kind')}"))
PY
done
