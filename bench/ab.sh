#!/usr/bin/env bash
# Conformance speed of the working tree against a git revision, side by
# side in one run, alternated (the order flips every repetition):
#   1. BenchmarkConformance (checker, in memory, one core): ns/event (wall)
#      and events per CPU second, per trace (worksteal, fifo);
#   2. verify check end to end, reading included: a 1e7-event trace of
#      1,000 tasks woken again and again (bench/gentrace -tasks 1000), and
#      a 2e6-event partially observed one (bench/gentrace -partial): wall
#      and CPU (user+sys) seconds.
# Prints the medians and the ratio new/base of each (above 1: the working
# tree is slower), the median and range of the ratios of the pairs run next
# to each other, and the load average before and after.
#
#   bash bench/ab.sh 11622f7           # about 3 minutes on a quiet 2-core machine
#   REPS=3 bash bench/ab.sh HEAD~1
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:?usage: bench/ab.sh REV}
REPS=${REPS:-7}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/base-src"
# conformPkg DIR: the package of the conformance checker in the tree DIR
# (./checker before the engines had a package each).
conformPkg() { if [ -d "$1/checker/conform" ]; then echo ./checker/conform; else echo ./checker; fi; }
git -C "$ROOT" archive "$BASE" | tar -x -C "$WORK/base-src"
(cd "$WORK/base-src" && go test -c -o "$WORK/base.test" "$(conformPkg "$WORK/base-src")" && go build -o "$WORK/base-verify" ./cmd/verify)
(cd "$ROOT" && go test -c -o "$WORK/new.test" ./checker/conform && go build -o "$WORK/new-verify" ./cmd/verify && go build -o "$WORK/gentrace" ./bench/gentrace)
"$WORK/gentrace" -events 10000000 -tasks 1000 > "$WORK/cycling.jsonl"
"$WORK/gentrace" -partial 2000000 > "$WORK/partial.jsonl"
echo "base $BASE ($(git -C "$ROOT" rev-parse --short "$BASE")), new: the working tree at $(git -C "$ROOT" rev-parse --short HEAD); $REPS repetitions"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"

one() { # one VERSION: a run of each measurement, appended to $WORK/VERSION.txt
  local v=$1
  (cd "$ROOT/checker/conform" && "$WORK/$v.test" -test.run '^$' -test.bench 'BenchmarkConformance$' -test.benchtime 3x -test.cpu 1) |
    awk -v v="$v" '/^BenchmarkConformance\//{for(i=1;i<=NF;i++){if($(i+1)=="ns/event")ns=$i; if($(i+1)=="events/cpu-s")cpu=$i}; print $1, ns, cpu}' >> "$WORK/$v.txt"
  for t in cycling partial; do
    /usr/bin/time -f "%e %U %S" -o "$WORK/time" "$WORK/$v-verify" check "$WORK/$t.jsonl" > /dev/null
    echo "check/$t $(cat "$WORK/time")" >> "$WORK/$v.txt"
  done
}
for ((r = 0; r < REPS; r++)); do
  if ((r % 2 == 0)); then one base; one new; else one new; one base; fi
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" <<'PY'
import statistics, sys
work = sys.argv[1]
def load(v):
    d = {}
    for line in open(f"{work}/{v}.txt"):
        f = line.split()
        name = f[0]
        if name.startswith("check/"):
            d.setdefault(name + " wall s", []).append(float(f[1]))
            d.setdefault(name + " cpu s", []).append(float(f[2]) + float(f[3]))
        else:
            d.setdefault(name + " ns/event", []).append(float(f[1]))
            d.setdefault(name + " events/cpu-s", []).append(float(f[2]))
    return d
b, n = load("base"), load("new")
# Each repetition runs base and new next to each other: the ratio of a
# pair sees the same load, so the median of the paired ratios is the
# figure to trust on a shared machine; the range says how noisy it was.
print(f"{'measure':<44} {'base med':>10} {'new med':>10} {'new/base':>9} {'paired med':>10} {'paired range':>14}")
for k in b:
    mb, mn = statistics.median(b[k]), statistics.median(n[k])
    # For a rate (events/cpu-s) the ratio is inverted, so that above 1
    # always means the new tree is slower.
    rate = "events/" in k
    ratio = mb / mn if rate else mn / mb
    pairs = sorted((x / y if rate else y / x) for x, y in zip(b[k], n[k]))
    print(f"{k:<44} {mb:>10.4g} {mn:>10.4g} {ratio:>9.3f} {statistics.median(pairs):>10.3f} {pairs[0]:>6.3f}-{pairs[-1]:<6.3f}  (n={len(pairs)})")
PY
