#!/usr/bin/env bash
# Checks one fixed version for a given time, in parts of PART cases each
# drawn from its own seed (1, 2, …), and reports every part: cases,
# seconds, load average before and after, findings.
#
#   nice -n 19 bash soak.sh MODFILE PACKAGE TEST [MINUTES] [PART]
#   nice -n 19 bash soak.sh go.mod ./errgroup 'TestErrgroup$' 10 500
#
# Exits non-zero if any part failed.
set -uo pipefail
cd "$(dirname "$0")"
modfile=$1 pkg=$2 test=$3 minutes=${4:-10} part=${5:-500}
go test -c -o /dev/null -modfile="$modfile" "$pkg" || exit 2 # compile (and download) outside the clock
start=$(date +%s) seed=0 cases=0 fails=0
while (( $(date +%s) - start < minutes * 60 )); do
  seed=$((seed + 1))
  t0=$(date +%s) l0=$(cut -d' ' -f1 /proc/loadavg)
  out=$(go test -count=1 -timeout 60m -modfile="$modfile" -run "$test" "$pkg" \
    -pool.cases="$part" -pool.seed="$seed" 2>&1)
  rc=$?
  cases=$((cases + part))
  [ $rc -eq 0 ] || fails=$((fails + 1))
  printf 'seed %d: %d cases, %ds, load %s -> %s, rc %d\n' "$seed" "$part" \
    $(( $(date +%s) - t0 )) "$l0" "$(cut -d' ' -f1 /proc/loadavg)" $rc
  [ $rc -eq 0 ] || grep -E 'pool: |FAIL|panic' <<< "$out" | cut -c1-600 | head -8
done
printf 'total: %d cases in %ds (%d parts), %d failed\n' "$cases" $(( $(date +%s) - start )) "$seed" "$fails"
exit $fails
