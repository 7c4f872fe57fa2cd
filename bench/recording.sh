#!/usr/bin/env bash
# What recording costs WorkSteal: BenchmarkSideBySide, which runs batches of
# trivial tasks on goroutines, on WorkSteal, on WorkSteal recording into a
# ring (a flight recorder) and on WorkSteal recording into a traces.Log, in
# rotating order in one process, REPS times over; then the median, over the
# runs, of each run's median per-batch ratios.
#
#   bash bench/recording.sh                 # 1e6 tasks per batch, the issue's workload
#   TASKS=10000 ITERS=300 bash bench/recording.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-7}
TASKS=${TASKS:-1000000}
ITERS=${ITERS:-7}
BIN=$(mktemp -d)/executor.test
trap 'rm -rf "$(dirname "$BIN")"' EXIT
(cd "$ROOT" && go test -c -o "$BIN" ./executor)
OUT=$(dirname "$BIN")/runs
for r in $(seq "$REPS"); do
  "$BIN" -test.run '^$' -test.bench SideBySide -test.benchtime "${ITERS}x" -test.cpu 2 -tasks "$TASKS" |
    grep '^BenchmarkSideBySide' | tee -a "$OUT"
done
python3 - "$OUT" <<'EOF'
import re, statistics, sys
runs = [dict((k, float(v)) for v, k in re.findall(r'([0-9.]+) (\S+/\S+|\S+-ns/task)', l)) for l in open(sys.argv[1])]
print(f"{len(runs)} runs of {sys.argv[1]}")
for k in ["ws-ns/task", "rec-ns/task", "log-ns/task", "go-ns/task", "rec/ws", "log/ws", "minrec/minws", "minlog/minws", "ws/go"]:
    xs = sorted(r[k] for r in runs)
    print(f"  {k:14s} median {statistics.median(xs):8.3f}   range {xs[0]:.3f}–{xs[-1]:.3f}")
EOF
