#!/usr/bin/env bash
# Peak memory (max RSS, /usr/bin/time) of verify check, check --html,
# check --chrome, check --linearizability and replay on long traces, and the 4,194,305-task
# trace. Results: bench/results/hostile.md. Needs ~3 GB in $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/verify" ./cmd/verify
go build -o "$dir/gentrace" ./bench/gentrace
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
