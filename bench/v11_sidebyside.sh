#!/usr/bin/env bash
# What recording format v1.1 (priorities, future ids, stops) costs: the
# executor benchmarks of this checkout against those of BASE (a commit, by
# default 11622f7, the last one that recorded v1.0), with this checkout's
# executor/bench_test.go in both, alternated round by round so that both
# see the same load; then the median of the paired ratios new/base and
# their quartiles.
#
#   bash bench/v11_sidebyside.sh                  # 11 rounds of Spawn, PingPong, SideBySide (1e4 tasks)
#   ROUNDS=6 BENCH=SideBySide BENCHTIME=300x bash bench/v11_sidebyside.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${BASE:-11622f7}
ROUNDS=${ROUNDS:-11}
BENCH=${BENCH:-'BenchmarkSpawn|BenchmarkPingPong|BenchmarkSideBySide'}
BENCHTIME=${BENCHTIME:-20x}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir "$DIR/base"
(cd "$ROOT" && git archive "$BASE" | tar -x -C "$DIR/base")
cp "$ROOT/executor/bench_test.go" "$DIR/base/executor/bench_test.go"
(cd "$DIR/base" && go test -c -o "$DIR/base.test" ./executor)
(cd "$ROOT" && go test -c -o "$DIR/new.test" ./executor)
for i in $(seq "$ROUNDS"); do
  order="base new"; [ $((i % 2)) = 0 ] && order="new base"
  for v in $order; do
    (cd "$ROOT/executor" && "$DIR/$v.test" -test.run '^$' -test.bench "$BENCH" -test.benchtime "$BENCHTIME" -test.cpu 2) | grep '^Benchmark' >> "$DIR/$v.txt"
  done
done
uptime
python3 - "$DIR/base.txt" "$DIR/new.txt" <<'PY'
import collections, re, statistics, sys
def load(f):
    d = collections.defaultdict(lambda: collections.defaultdict(list))
    for l in open(f):
        p = l.split(); name = re.sub(r'-\d+$', '', p[0]); v = p[2:]
        for i in range(0, len(v) - 1, 2):
            d[name][v[i + 1]].append(float(v[i]))
    return d
b, n = load(sys.argv[1]), load(sys.argv[2])
for name in b:
    for unit in ('ns/task', 'ns/round', 'rec/ws', 'log/ws'):
        if unit in b[name]:
            r = sorted(x / y for x, y in zip(n[name][unit], b[name][unit]))
            q = statistics.quantiles(r, n=4) if len(r) > 1 else [r[0]] * 3
            print(f"{name:38s} {unit:8s} base {statistics.median(b[name][unit]):9.3f} new {statistics.median(n[name][unit]):9.3f}  paired new/base {statistics.median(r):.3f} ({q[0]:.3f}-{q[2]:.3f})")
PY
