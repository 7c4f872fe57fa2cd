#!/usr/bin/env bash
# What recording costs tokio on a spawn/yield loop: tokio-check bench side
# by side (no wrapper, the deferred recorder, the streaming one), for each
# work per poll, three ways: each run in a fresh process (a program's first
# recording), the same with Options::reserve (the recorder's memory touched
# before the run), and all runs in one process after a warm-up. At work 0
# with each of the wrapper's time stamps: spawns and poll-begins (the
# default, what tokio-check run records), none (--no-time), and poll-ends
# too (--end-time). Each table ends with what a time stamp and a locked add
# cost on this machine, which the ratio at work 0 moves with.
#
#   bash bench/rust_recording.sh            # REPS=21 at work 0, 11 otherwise
#   BIG=1 bash bench/rust_recording.sh      # also 1000 tasks x 1000 yields
#   BUSY=1 bash bench/rust_recording.sh     # only the explicit calls' cost
#
# Then explicit calls on an executor's hot path: busybench, a busy loop of
# ~16 ns polls recording four events each, beside the same loop recording
# nothing, in each mode (streaming, buffered, deferred; with and without a
# reserve), one thread and two.
#
# Needs cargo and Debian's librust-tokio-dev (see examples/rust/README.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-21}
(cd "$root/examples/rust" && cargo build --release -q)
b="$root/examples/rust/target/release/tokio-check"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "start $(date -u '+%d %b %Y %H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
busy() {
  (cd "$root/rust/execspec-trace" && cargo build --release -q --offline --example busybench)
  "$root/rust/execspec-trace/target/release/examples/busybench" 1 1000000 11
  "$root/rust/execspec-trace/target/release/examples/busybench" 2 500000 11
}
if [ "${BUSY:-0}" = 1 ]; then
  busy
  echo "end $(date -u '+%H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi
specs=("100 0 $REPS" "100 0 $REPS --no-time" "100 0 $REPS --end-time" "100 1000 11" "100 5000 11")
if [ "${BIG:-0}" = 1 ]; then specs+=("1000 0 11" "1000 1000 5"); fi
for spec in "${specs[@]}"; do
  set -- $spec
  for mode in "" --reserve --warm; do
    echo "== tasks 1000, yields $1, work $2 ns, reps $3 ${4:-} ${mode:-(fresh process)}"
    "$b" bench --workers 2 --tasks 1000 --yields "$1" --work-ns "$2" --reps "$3" ${4:-} $mode --out "$out" | tail -4
  done
done
busy
echo "end $(date -u '+%H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
