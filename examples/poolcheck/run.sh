#!/usr/bin/env bash
# Checks each pool library at the version with a published bug (expected
# to fail, naming the bug's property) and at the version that fixed it
# (expected to pass), with the generic workloads of properties/pool.
#
#   bash run.sh                     # every target, POOLCHECK_CASES cases each (default 100)
#   POOLCHECK_CASES=2000 bash run.sh fixed    # only the fixed versions, longer
#
# Needs the Go module proxy (the first run downloads the libraries).
set -uo pipefail
cd "$(dirname "$0")"
only=${1:-}
fails=0
# modfile | package | test | expect | library@version | what
targets=(
  "go.ants242.mod|./ants|TestAnts$|fail progress/Resize|ants v2.4.2|Tune wakes no blocked submitter (#205); a dying worker neither (#146)"
  "go.ants275.mod|./ants|TestAnts$|pass|ants v2.7.5|the Tune fix (the capacity race #374 acknowledged by version)"
  "go.buggy.mod|./ants|TestAntsCapacityRace$|fail capacity|ants v2.11.3|capacity race (#374)"
  "go.mod|./ants|TestAnts|pass|ants v2.11.4|both fixes"
  "go.buggy.mod|./pond|TestPond$|fail no-hang|pond v2.5.0|Goexit hangs StopAndWait (#135)"
  "go.mod|./pond|TestPond|pass|pond v2.7.1|the fix"
  "go.buggy.mod|./pond|TestPondGroup$|fail cancel-stops|pond v2.5.0 group|Cancel leaves the group's queued tasks unresolved, Wait hangs (#138)"
  "go.buggy.mod|./pond1|TestPond1$|pass|pond v1.9.1|Cancel, then StopAndWait returns"
  "go.mod|./pond1|TestPond1$|fail cancel-stops|pond v1.9.2|StopAndWait hangs after the pool's context is cancelled (a regression of v1.9.2, no fixed v1 release)"
  "go.sync060.mod|./semaphore|TestSemaphore$|fail done-refused|x/sync v0.6.0|Acquire with a done context succeeds (golang/go#63615)"
  "go.mod|./semaphore|TestSemaphore$|pass|x/sync v0.24.0|the fix (v0.7.0)"
  "go.mod|./conc|TestConc$|fail reuse|conc v0.3.0|Go after Wait panics (#103); fixed in no release, served as a pseudo-version (below)"
  "go.conc240108.mod|./conc|TestConc|fail errors-propagate|conc main 2024-01-08|a reused pool's Wait returns the errors of earlier rounds too (#128)"
  "go.conc240121.mod|./conc|TestConc|pass|conc main 2024-01-21|the fixes (#129 for #128, #108 for #103)"
  "go.mod|./errgroup|TestErrgroup$|pass|x/sync v0.24.0 errgroup|no known bug"
)
for t in "${targets[@]}"; do
  IFS='|' read -r modfile pkg test expect lib what <<< "$t"
  if [ "$only" = fixed ] && [ "${expect%% *}" != pass ]; then continue; fi
  if [ "$only" = buggy ] && [ "${expect%% *}" = pass ]; then continue; fi
  start=$(date +%s)
  out=$(go test -count=1 -timeout 60m -modfile="$modfile" -run "$test" "$pkg" -pool.cases="${POOLCHECK_CASES:-100}" 2>&1)
  rc=$?
  secs=$(( $(date +%s) - start ))
  found=$(grep -o 'pool: [a-z-]* (after [^)]*)' <<< "$out" | sort -u | tr '\n' ' ')
  after=$(grep -o '[a-z/ A-Za-z-]*: found after [0-9.]*[µmn]*s (case [0-9]*)' <<< "$out" | tr '\n' ';')
  case "$expect" in
    pass) if [ $rc -eq 0 ]; then verdict=ok; else verdict=UNEXPECTED; fi ;;
    fail*) want=${expect#fail }
      if [ $rc -ne 0 ] && grep -q "pool: ${want%%/*}" <<< "$out"; then verdict=ok; else verdict=UNEXPECTED; fi ;;
  esac
  [ "$verdict" = ok ] || fails=$((fails+1))
  printf '%-10s %-24s expect %-22s %4ss  %s\n' "$verdict" "$lib" "$expect" "$secs" "$what"
  [ -n "$found" ] && printf '           found: %s\n' "$found"
  [ -n "$after" ] && printf '           %s\n' "$after"
  if [ "$verdict" != ok ]; then grep -E 'pool: |FAIL|panic' <<< "$out" | cut -c1-400 | head -8; fi
done
exit $fails
