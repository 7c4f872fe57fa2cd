#!/usr/bin/env bash
# Model checking at scale, side by side in one run, interleaved:
#   1. safety on one core (--parallel 1) against two (--parallel 2), and the
#      compact store (--compact) against the plain one, on W3 T5 K1;
#   2. --property all against each single property on W3 T4 K2.
# Prints, per run kind, the median wall time, CPU time (user+sys), states/s,
# bytes/state and RSS, the 2-core speedup and parallel efficiency
# (speedup ÷ 2), and the load average before and after (the figures are only
# as good as the machine is quiet).
#
#   bash bench/scale.sh                      # about 2-3 minutes on a quiet 2-core machine
#   REPS=5 SAFETY="3 4 2" ALL="3 4 1" bash bench/scale.sh
#   ALL=none bash bench/scale.sh             # the safety part only
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-3}
SAFETY=${SAFETY:-"3 5 1"}
ALL=${ALL:-"3 4 2"}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$ROOT" && go build -o "$WORK/verify" ./cmd/verify)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"

# run NAME ARGS...: one run, appending "wall cpu states bytes_per_state rss_kib" to $WORK/NAME.
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$WORK/verify" model --json -q "$@" > "$WORK/out.json" || true
  python3 - "$WORK" "$name" <<'PY'
import json, sys
work, name = sys.argv[1], sys.argv[2]
rs = [json.loads(l) for l in open(work + "/out.json") if l.strip()]
assert rs and all(r["verdict"] == "holds" for r in rs), rs
wall, usr, sys_, rss = open(work + "/time").read().split()
r = rs[-1]
open("%s/%s" % (work, name), "a").write("%s %f %d %f %s\n" % (wall, float(usr) + float(sys_), r["states"], r["bytes_per_state"], rss))
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { awk -v c="$2" '{print $c}' "$WORK/$1" | median; }

read -r W T K <<<"$SAFETY"
read -r AW AT AK <<<"$ALL"
for r in $(seq "$REPS"); do
  run seq1 --workers "$W" --tasks "$T" --pendings "$K" --parallel 1
  run par2 --workers "$W" --tasks "$T" --pendings "$K" --parallel 2
  if "$WORK/verify" model -h 2>&1 | grep -q -- -compact; then
    run compact1 --workers "$W" --tasks "$T" --pendings "$K" --parallel 1 --compact
    run compact2 --workers "$W" --tasks "$T" --pendings "$K" --parallel 2 --compact
  fi
  for p in safety eventually-done woken-polled all; do
    [ "$ALL" = none ] && break
    run "all-$p" --workers "$AW" --tasks "$AT" --pendings "$AK" --property "$p"
  done
done

printf '\n%-26s %9s %9s %12s %9s %9s\n' run wall_s cpu_s states/s B/state RSS_MiB
for n in seq1 par2 compact1 compact2 all-safety all-eventually-done all-woken-polled all-all; do
  [ -f "$WORK/$n" ] || continue
  wall=$(col "$n" 1); cpu=$(col "$n" 2); st=$(col "$n" 3); bps=$(col "$n" 4); rss=$(col "$n" 5)
  case $n in seq1|par2|compact*) label="W$W T$T K$K $n";; *) label="W$AW T$AT K$AK ${n#all-}";; esac
  printf '%-26s %9.2f %9.2f %12.0f %9.1f %9.0f\n' "$label" "$wall" "$cpu" "$(python3 -c "print($st/$wall)")" "$bps" "$((rss/1024))"
done
s1=$(col seq1 1); s2=$(col par2 1)
python3 -c "s=$s1/$s2; print('\n2-core speedup (median wall, --parallel 1 / --parallel 2): %.2fx, parallel efficiency %.2f' % (s, s/2))"
if [ -f "$WORK/compact1" ]; then
  python3 -c "print('compact store: time ratio compact/plain %.2f on one core, %.2f on two' % ($(col compact1 1)/$s1, $(col compact2 1)/$s2))"
fi
[ "$ALL" = none ] || python3 -c "
a=$(col all-all 1); m=max($(col all-safety 1), $(col all-eventually-done 1), $(col all-woken-polled 1))
print('--property all: %.2fs, slowest single property %.2fs: %.2fx' % (a, m, a/m))"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)   reps: $REPS (medians)"
