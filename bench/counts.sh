#!/usr/bin/env bash
# Checks that the model reaches exactly the reference's numbers of distinct
# states and transitions for every configuration the reference lists (the
# small ones are asserted by `go test ./checker/explore`; these are the large ones).
# The reference numbers come from an independent encoding of the same rules
# on which a Python explorer, SPIN and TLC agree; SPIN's transitions count two
# more than the model's edges (its initial step and the final stutter).
# SPIN prints counts of 1e8 and more with 8 significant digits
# (1.1063812e+08), so those are compared at that precision.
#
#   bash bench/counts.sh            # every size, about 3 minutes on 2 cores
#   MAX=1000000 bash bench/counts.sh  # only sizes up to a million states
#   EXTRA="--compact --parallel 1" bash bench/counts.sh  # with other flags of verify model
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MAX=${MAX:-100000000}
EXTRA=${EXTRA:-}
BIN=$(mktemp -d)/verify
trap 'rm -rf "$(dirname "$BIN")"' EXIT
(cd "$ROOT" && go build -o "$BIN" ./cmd/verify)
fail=0
#  W T K  states     SPIN transitions
while read -r W T K S TR; do
  [ "$S" -gt "$MAX" ] && continue
  out=$("$BIN" model --json -q --workers "$W" --tasks "$T" --pendings "$K" --local-cap 2 $EXTRA)
  read -r got_s got_t secs < <(python3 -c "import json,sys; r=json.loads(sys.argv[1])['results'][0]; print(r['states'], r['transitions'], r['seconds'])" "$out")
  same_t=$(python3 -c "a, b = $got_t + 2, $TR; print(int(a == b or (b >= 1e8 and '%.7e' % a == '%.7e' % b)))")
  if [ "$got_s" = "$S" ] && [ "$same_t" = 1 ]; then v=ok; else v=MISMATCH; fail=1; fi
  printf 'W%s T%s K%s  states %10s (reference %10s)  transitions+2 %11s (reference %11s)  %6.2fs  %s\n' "$W" "$T" "$K" "$got_s" "$S" "$((got_t + 2))" "$TR" "$secs" "$v"
done <<'REF'
2 2 1 327 965
2 2 2 1048 3247
2 3 1 4692 17442
3 3 1 13195 62502
2 3 2 29064 112768
2 4 1 64751 282900
3 3 2 80796 398040
3 4 1 262043 1441559
4 4 1 737225 4922842
2 4 2 786461 3586952
2 5 1 890000 4437727
3 4 2 3056837 17412008
3 5 1 4978397 30631413
2 6 1 12608223 70278283
4 5 1 18415154 136441270
2 5 2 21203511 110638120
REF
exit $fail
