#!/usr/bin/env bash
# How far symmetry reduction cuts states and time, with verdicts unchanged:
# each configuration with and without --symmetry, side by side, medians of
# REPS runs, and the verdict of every broken variant both ways.
#
#   bash bench/symmetry.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-3}
BIN=$(mktemp -d)/verify
trap 'rm -rf "$(dirname "$BIN")"' EXIT
(cd "$ROOT" && go build -o "$BIN" ./cmd/verify)
field() { python3 -c "import json,sys; r=json.loads(sys.argv[1]); print(r['$1'])" "$2"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s %10s %8s %10s %8s %9s %9s %s\n' config states s states_sym s_sym "states÷" "time÷" verdicts
for cfg in "3 4 2" "3 5 1" "4 4 1" "2 5 2"; do
  read -r W T K <<< "$cfg"
  a=""; b=""; : > /tmp/sym.a; : > /tmp/sym.b
  for r in $(seq "$REPS"); do
    a=$("$BIN" model --json -q --workers "$W" --tasks "$T" --pendings "$K"); field seconds "$a" >> /tmp/sym.a
    b=$("$BIN" model --json -q --workers "$W" --tasks "$T" --pendings "$K" --symmetry); field seconds "$b" >> /tmp/sym.b
  done
  sa=$(field states "$a"); sb=$(field states "$b"); ta=$(median < /tmp/sym.a); tb=$(median < /tmp/sym.b)
  printf '%-10s %10s %8.2f %10s %8.2f %9.1f %9.1f %s/%s\n' "W$W T$T K$K" "$sa" "$ta" "$sb" "$tb" \
    "$(python3 -c "print($sa/$sb)")" "$(python3 -c "print($ta/$tb)")" "$(field verdict "$a")" "$(field verdict "$b")"
done
echo
echo "variants (W2 T3 K1): property violated and counterexample length, without / with symmetry"
for v in lost-wakeup duplicate-enqueue enqueue-while-running overflow-drop; do
  a=$("$BIN" model --json -q --variant "$v" --out "$(dirname "$BIN")/cex" || true)
  b=$("$BIN" model --json -q --variant "$v" --symmetry --out "$(dirname "$BIN")/cex" || true)
  printf '  %-22s %s %s steps / %s %s steps\n' "$v" \
    "$(field property "$a")" "$(python3 -c "import json,sys; print(len(json.loads(sys.argv[1])['path']))" "$a")" \
    "$(field property "$b")" "$(python3 -c "import json,sys; print(len(json.loads(sys.argv[1])['path']))" "$b")"
done
