#!/usr/bin/env bash
# bash bench/hostile.sh [memory|shapes]   (default: both)
#
# memory: peak memory (max RSS, /usr/bin/time) of verify check, check --html,
# check --chrome, check --linearizability and replay on long traces, and the
# 4,194,305-task trace. Needs ~3 GB in $TMPDIR.
#
# shapes: the time of verify check on the shapes that cost O(n²) when a take
# from the middle of the global queue scanned or shifted it, at n and 10·n
# tasks (n = 20,000 unless N says), and the ratio of the medians (linear: about 10): a priority trace
# of n tasks queued at once (aging 0: taken by priority; aging 2: the first
# two by priority, the rest aged, in queue order), and an order-intervals
# trace of n pushes all overlapping, taken in reverse. RUNS (default 5)
# runs each; the median of the wall times and of the CPU times (user+sys).
# Each shape is timed twice: verify check, and verify check --html (whose
# picture of the queues took a scan per take before it was indexed).
# N sets n; VERIFY=path times another build of verify (an older commit's).
# Results: bench/results/hostile.md, BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/verify" ./cmd/verify
go build -o "$dir/gentrace" ./bench/gentrace
[ -z "${VERIFY:-}" ] || cp "$VERIFY" "$dir/verify"

if [ "$what" = shapes ] || [ "$what" = all ]; then
  runs=${RUNS:-5}
  median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  # time1 TRACE [FLAGS]: prints "wall cpu" of one verify check (exit 0 expected).
  time1() {
    local TIMEFORMAT='%3R %3U %3S'
    { time "$dir/verify" check ${2:-} "$1" > /dev/null 2> "$dir/err" || { cat "$dir/err" >&2; exit 1; }; } 2>&1 | awk '{print $1, $2 + $3}'
  }
  shape() { # name, gentrace flags with N for the size, n
    local name=$1 flags=$2 n=$3 w1 c1 w10 c10 how
    for how in "" "--html $dir/page.html"; do
      for k in 1 10; do
        "$dir/gentrace" ${flags//N/$((k * n))} > "$dir/s.jsonl"
        for _ in $(seq "$runs"); do time1 "$dir/s.jsonl" "$how"; done > "$dir/t"
        eval "w$k=$(awk '{print $1}' "$dir/t" | median) c$k=$(awk '{print $2}' "$dir/t" | median)"
      done
      printf '%-29s %8d tasks %6.2fs wall %6.2fs cpu | %8d tasks %6.2fs wall %6.2fs cpu | ratio wall %5.1f cpu %5.1f\n' \
        "$name${how:+ --html}" "$n" "$w1" "$c1" $((10 * n)) "$w10" "$c10" "$(echo "$w10 / $w1" | bc -l)" "$(echo "$c10 / $c1" | bc -l)"
    done
  }
  uptime
  n=${N:-20000}
  shape "priority aging 0" "-priority N -aging 0" "$n"
  shape "priority aging 2" "-priority N -aging 2" "$n"
  shape "intervals reverse" "-intervals N" "$n"
  uptime
fi
[ "$what" = memory ] || [ "$what" = all ] || exit 0
"$dir/gentrace" -events 10000000 > "$dir/distinct.jsonl"           # 2.5 M tasks, each polled once
"$dir/gentrace" -events 10000000 -tasks 1000 > "$dir/cycling.jsonl" # 1,000 tasks woken again and again
"$dir/gentrace" -spawn 4194305 > "$dir/many.jsonl"
uptime
measure() { /usr/bin/time -f "%M KB %e s" "$dir/verify" "$@" > /dev/null 2> "$dir/err" || true; echo "$* → $(tail -1 "$dir/err")"; }
for t in distinct cycling; do
  measure check "$dir/$t.jsonl"
  measure check --html "$dir/out.html" "$dir/$t.jsonl"
  measure check --chrome "$dir/out.json" "$dir/$t.jsonl"
  measure replay --print "$dir/$t.jsonl"
  measure check --linearizability "$dir/$t.jsonl"
done
measure check "$dir/many.jsonl"
