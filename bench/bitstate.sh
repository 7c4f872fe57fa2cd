#!/usr/bin/env bash
# Bitstate search and swarms beyond the exhaustive search's reach, in one run:
#   1. one bitstate search with a FILTER_MB filter on W T K (default W4 T6 K2,
#      which is too large to store) for every broken variant of the
#      work-stealing policy: the property it finds and the time to find it;
#   2. the same, as a swarm of N local processes (verify model --swarm I/N,
#      FILTER_MB/N each, so the memory is the same), merged with verify merge:
#      the time to the first violation, measured from the launch;
#   3. on the correct model, a swarm with a time budget each, merged: the
#      combined coverage estimate.
#
#   bash bench/bitstate.sh                         # about 2 minutes
#   FILTER_MB=1024 N=8 CFG="4 6 2" BUDGET=60s bash bench/bitstate.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FILTER_MB=${FILTER_MB:-1024}
N=${N:-8}
CFG=${CFG:-"4 6 2"}
BUDGET=${BUDGET:-20s}
VARIANTS=${VARIANTS:-"lost-wakeup duplicate-enqueue enqueue-while-running steal-owner-end overflow-drop"}
read -r W T K <<<"$CFG"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && go build -o "$WORK/verify" ./cmd/verify)
now() { date +%s.%N; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)   W$W T$T K$K"
printf '%-22s %-16s %9s %6s   %-16s %9s %6s\n' variant one-search time_s steps "swarm-of-$N" first_s steps
for v in $VARIANTS; do
  t0=$(now)
  "$WORK/verify" model -q --json --workers "$W" --tasks "$T" --pendings "$K" --variant "$v" --bitstate "$FILTER_MB" --timeout 120s --out "$WORK/one" > "$WORK/one.json" || true
  t1=$(now)
  read -r prop steps < <(python3 -c "import json; r=json.load(open('$WORK/one.json')); print(r['property'] if r['verdict']=='violated' else 'NOT-FOUND', len(r.get('path') or []))")
  one=$(python3 -c "print('%.2f' % ($t1-$t0))")
  rm -f "$WORK"/s-*.json
  t0=$(now)
  for i in $(seq "$N"); do
    "$WORK/verify" model -q --workers "$W" --tasks "$T" --pendings "$K" --variant "$v" --bitstate $((FILTER_MB / N)) --timeout 120s \
      --swarm "$i/$N" --result "$WORK/s-$i.json" --out "$WORK/sw" > /dev/null &
  done
  # The time to the first violation: the first member to write a violated result.
  first=""
  while [ -z "$first" ]; do
    if grep -l '"verdict":"violated"' "$WORK"/s-*.json >/dev/null 2>&1; then first=$(python3 -c "print('%.2f' % ($(now)-$t0))"); fi
    if ! jobs -r | grep -q .; then [ -z "$first" ] && first=$(python3 -c "print('%.2f' % ($(now)-$t0))"); break; fi
    sleep 0.05
  done
  wait || true
  "$WORK/verify" merge --json "$WORK"/s-*.json > "$WORK/merge.json" || true
  read -r sprop ssteps < <(python3 -c "import json; r=json.load(open('$WORK/merge.json')); print(r.get('property') if r['verdict']=='violated' else 'NOT-FOUND', len(r.get('steps') or []))")
  printf '%-22s %-16s %9s %6s   %-16s %9s %6s\n' "$v" "$prop" "$one" "$steps" "$sprop" "$first" "$ssteps"
done
echo
echo "correct model, swarm of $N with $BUDGET each, $((FILTER_MB / N)) MiB filters:"
rm -f "$WORK"/s-*.json
for i in $(seq "$N"); do
  "$WORK/verify" model -q --workers "$W" --tasks "$T" --pendings "$K" --bitstate $((FILTER_MB / N)) --timeout "$BUDGET" \
    --swarm "$i/$N" --result "$WORK/s-$i.json" > /dev/null &
done
wait || true
"$WORK/verify" merge "$WORK"/s-*.json || true
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
