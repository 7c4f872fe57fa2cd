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
#   bash bench/poolctl.sh [CASES]             # default 2000 cases per test
#   bash bench/poolctl.sh CASES OTHER [N]     # side by side with the tree OTHER
#   bash bench/poolctl.sh build DIR           # only build DIR/ants.test (profiling,
#                                             # cachegrind: cd DIR/ants, then
#                                             # EXECSPEC_RUNS=300 ../ants.test -test.run '^TestAnts$')
#
# With OTHER (another checkout of the module: `git worktree add`, or
# `git archive REV | tar -x -C DIR`), both test binaries are built, then
# run in N rounds (default 3) per test, each round one process of each in
# an order drawn at random, and each line is one process; the medians per
# CPU-second, their ratio (this tree over OTHER), and the median and
# quartiles of the rounds' own ratios come last. On a shared machine only
# such ratios compare, and the rounds' ratios best: a round's two
# processes run within seconds of each other.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cases=${1:-2000}
other=${2:-}
reps=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# build TREE DIR: DIR/ants.test, the instrumented ants test binary of
# the module at TREE, beside a copy of the test's package (DIR/ants).
build() {
  local tree=$1 dir=$2
  mkdir -p "$dir"
  (cd "$tree" && go build -o "$dir/verify" ./cmd/verify)
  cp -r "$tree/examples/poolcheck/ants" "$dir/"
  cp "$tree/examples/poolcheck/go.mod" "$tree/examples/poolcheck/go.sum" "$dir/"
  sed -i "s#=> ../..#=> $tree#" "$dir/go.mod"
  (
    cd "$dir"
    ./verify test ./ants --instrument 'github.com/panjf2000/ants/v2/...' --run 'TestAntsSmall$' --runs 1 --keep -q 2>"$dir/stderr" >/dev/null || true
    local b
    b=$(sed -n 's/^verify test: the rewritten files and the overlay are in //p' "$dir/stderr")
    [ -n "$b" ] || { cat "$dir/stderr"; exit 2; }
    local flags=(-overlay="$b/overlay.json")
    [ -f "$b/go.mod" ] && flags+=(-modfile="$b/go.mod" -mod=mod)
    go test -c -o "$dir/ants.test" "${flags[@]}" ./ants
    rm -rf "$b"
  )
}

# measure BIN TEST LABEL: one process of CASES cases; prints a line and
# appends "LABEL TEST per-CPU-second" to $work/results.
measure() {
  local bin=$1 test=$2 label=$3
  rm -f "$work/report.jsonl"
  (cd "$(dirname "$bin")/ants" && EXECSPEC_RUNS=$cases EXECSPEC_REPORT="$work/report.jsonl" /usr/bin/time -o "$work/time" -f '%U %S %e' "$bin" -test.run "^$test\$" >/dev/null 2>&1) || true
  python3 - "$test" "$cases" "$(tail -1 "$work/time")" "$work/report.jsonl" "$label" "$work/results" <<'PY'
import json, sys
test, cases, t, path, label, results = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5], sys.argv[6]
o = json.loads(open(path).readline())
user, sys_, wall = map(float, t)
cpu = user + sys_
runs, steps = o["runs"], o.get("total_steps", 0)
print(f"{label:6s} {test:14s} {runs} cases  {runs/o['seconds']:6.0f}/s wall  {runs/cpu:6.0f} per CPU-second  "
      f"{steps/runs:6.0f} steps/case  {cpu*1e6/max(steps,1):5.2f} µs/step  (cpu {cpu:.2f}s, wall {wall:.2f}s)"
      + ("" if not o.get("failed_run") else f"  FINDING: {o.get('kind')}"), flush=True)
open(results, "a").write(f"{label} {test} {runs/cpu}\n")
PY
}

if [ "$cases" = build ]; then
  [ -n "$other" ] || { echo "usage: bash bench/poolctl.sh build DIR" >&2; exit 2; }
  mkdir -p "$other"
  build "$root" "$(cd "$other" && pwd)"
  exit 0
fi
build "$root" "$work/this"
if [ -z "$other" ]; then
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for test in TestAntsSmall TestAnts; do
    measure "$work/this/ants.test" "$test" this
  done
  exit 0
fi
other=$(cd "$other" && pwd)
build "$other" "$work/other"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for test in TestAntsSmall TestAnts; do
  for _ in $(seq "$reps"); do
    if ((RANDOM % 2)); then
      measure "$work/this/ants.test" "$test" this
      measure "$work/other/ants.test" "$test" other
    else
      measure "$work/other/ants.test" "$test" other
      measure "$work/this/ants.test" "$test" this
    fi
  done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results" "$other" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for test in ("TestAntsSmall", "TestAnts"):
    vals = {lab: [float(v) for l, t, v in rows if l == lab and t == test] for lab in ("this", "other")}
    med = {lab: statistics.median(v) for lab, v in vals.items()}
    pairs = sorted(a / b for a, b in zip(vals["this"], vals["other"]))
    q = lambda f: pairs[min(len(pairs) - 1, int(f * len(pairs)))]
    print(f"{test:14s} median per CPU-second: this {med['this']:6.0f}, other {med['other']:6.0f} ({sys.argv[2]}): ratio {med['this']/med['other']:.2f}; "
          f"rounds' ratios: median {statistics.median(pairs):.2f}, quartiles {q(0.25):.2f}-{q(0.75):.2f}")
PY
