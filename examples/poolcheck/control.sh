#!/usr/bin/env bash
# The table of run.sh under control: each target's adapter test (unchanged)
# run by `verify test` with its library instrumented, one generated case per
# controlled run (RUNS cases; each distinct finding shrunk, saved with its
# case inside the schedule file, and the search goes on); the first
# finding's schedule replayed 10 times, each in a fresh process.
#
#   bash control.sh [RUNS]          # every target, up to RUNS runs each (default 2000)
#   bash control.sh 20000 fixed     # only the fixed versions
#   bash control.sh 500 all 'ants v2.4'   # the rows whose library matches
#   bash control.sh 10m fixed       # a duration instead of a count: each
#                                   # target runs for 10 minutes (verify test --time)
#
# Prints, per target: the outcome, the run that first failed and its kind,
# replays that matched the schedule's checksum, seconds; then the cases
# run, the acknowledged findings (pool.Library.Known) by kind and the load
# average (1 minute, sampled every 30 s) over the target's run. Needs the
# module proxy.
set -uo pipefail
cd "$(dirname "$0")"
runs=${1:-2000}
# A count, or a duration (10m, 90s, 1h30m) for verify test --time.
if [[ $runs =~ ^[0-9]+$ ]]; then budget=(--runs "$runs" --timeout 30m); else budget=(--time "$runs"); fi
only=${2:-}
match=${3:-}
root=$(cd ../.. && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
verify=$bin/verify
(cd "$root" && go build -o "$verify" ./cmd/verify) || exit 2
out=$(mktemp -d)
echo "schedules of findings in $out"
fails=0
# modfile | package | test | expect | instrument | library@version | strategy (random if empty)
targets=(
  "go.ants242.mod|./ants|TestAnts$|fail progress|github.com/panjf2000/ants/v2/...|ants v2.4.2"
  "go.ants275.mod|./ants|TestAnts$|pass|github.com/panjf2000/ants/v2/...|ants v2.7.5"
  "go.buggy.mod|./ants|TestAntsCapacityRace$|fail capacity|github.com/panjf2000/ants/v2/...|ants v2.11.3"
  "go.mod|./ants|TestAnts$|pass|github.com/panjf2000/ants/v2/...|ants v2.11.4"
  "go.buggy.mod|./pond|TestPond$|fail no-hang|github.com/alitto/pond/v2/...|pond v2.5.0"
  "go.mod|./pond|TestPond$|pass|github.com/alitto/pond/v2/...|pond v2.7.1"
  "go.buggy.mod|./pond|TestPondGroup$|fail cancel-stops|github.com/alitto/pond/v2/...|pond v2.5.0 group"
  "go.mod|./pond|TestPondGroup$|pass|github.com/alitto/pond/v2/...|pond v2.7.1 group"
  "go.pond216.mod|./pond21|TestPondClose$|fail none-lost|github.com/alitto/pond/v2/...|pond v2.1.6 close|pct"
  "go.mod|./pond21|TestPondClose$|pass|github.com/alitto/pond/v2/...|pond v2.7.1 close|pct"
  "go.buggy.mod|./pond1|TestPond1$|pass|github.com/alitto/pond/...|pond v1.9.1"
  "go.mod|./pond1|TestPond1$|fail cancel-stops|github.com/alitto/pond/...|pond v1.9.2"
  "go.sync060.mod|./semaphore|TestSemaphore$|fail done-refused|golang.org/x/sync/semaphore|x/sync v0.6.0"
  "go.mod|./semaphore|TestSemaphore$|pass|golang.org/x/sync/semaphore|x/sync v0.24.0"
  "go.mod|./conc|TestConc$|fail reuse|github.com/sourcegraph/conc/...|conc v0.3.0"
  "go.conc240108.mod|./conc|TestConc$|fail errors-propagate|github.com/sourcegraph/conc/...|conc main 2024-01-08"
  "go.conc240121.mod|./conc|TestConc$|pass|github.com/sourcegraph/conc/...|conc main 2024-01-21"
  "go.mod|./errgroup|TestErrgroup$|pass|golang.org/x/sync/errgroup|x/sync v0.24.0 errgroup"
)
for t in "${targets[@]}"; do
  IFS='|' read -r modfile pkg test expect inst lib strategy <<< "$t"
  if [ -n "$match" ] && ! grep -q -- "$match" <<< "$lib"; then continue; fi
  if [ "$only" = fixed ] && [ "${expect%% *}" != pass ]; then continue; fi
  if [ "$only" = buggy ] && [ "${expect%% *}" = pass ]; then continue; fi
  # verify test reads go.mod: a modfile variant is copied into a scratch
  # copy of the module.
  work=$(mktemp -d)
  cp -r ants conc errgroup pond pond1 pond21 semaphore "$work"/
  cp "$modfile" "$work/go.mod"; cp "${modfile%.mod}.sum" "$work/go.sum"
  sed -i "s#=> ../..#=> $root#" "$work/go.mod"
  # The rewritten code calls generic functions of the runtime: a library
  # whose go.mod says go < 1.18 (ants v2.4.2, v2.7.5) does not compile
  # rewritten. It is copied with its go directive raised, into a directory
  # named as in the module cache (path@version, which tells pool.Library
  # the version), and replaced.
  mod=${inst%/...}
  if info=$(cd "$work" && go list -m -f '{{.Dir}}|{{.Version}}|{{.GoVersion}}' "$mod" 2>/dev/null); then
    IFS='|' read -r mdir mver mgo <<< "$info"
    if [ -n "$mgo" ] && [ "$(printf '%s\n1.18\n' "$mgo" | sort -V | head -1)" != 1.18 ]; then
      mkdir -p "$work/lib/$mod@$mver"; cp -r "$mdir/." "$work/lib/$mod@$mver"; chmod -R u+w "$work/lib"
      sed -i "s#^go .*#go 1.18#" "$work/lib/$mod@$mver/go.mod"
      printf '\nreplace %s => ./lib/%s@%s\n' "$mod" "$mod" "$mver" >> "$work/go.mod"
    fi
  fi
  start=$(date +%s)
  (while :; do cut -d' ' -f1 /proc/loadavg; sleep 30; done) > "$work/load" & sampler=$!
  res=$(cd "$work" && "$verify" test "$pkg" --instrument "$inst" --run "$test" "${budget[@]}" --strategy "${strategy:-random}" --out "$out/${lib// /_}" -q -v --keep --json 2>"$work/stderr")
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  load=$(awk '{s+=$1; n++; if ($1>m) m=$1} END {if (n) printf "%.2f (max %.2f)", s/n, m}' "$work/load")
  cases=$(sed -n 's/.*pool: control mode: \([0-9]*\) cases.*/\1/p' "$work/stderr" | head -1)
  known=$(sed -n 's/.*known defect \(.*\) seen in \([0-9]*\) cases.*/\1: \2/p' "$work/stderr" | sort | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  build=$(sed -n 's/^verify test: the rewritten files and the overlay are in //p' "$work/stderr")
  secs=$(( $(date +%s) - start ))
  read -r failed kind sched rate <<< "$(python3 -c '
import json,sys
try:
  r=json.loads(sys.stdin.read())
  t=r["tests"]
  n=sum(x["runs"] for x in t); s=sum(x.get("seconds",0) for x in t)
  rate="%.0f/s" % (n/s) if s else "-"
  o=[x for x in t if x.get("failed_run")]
  print(o[0]["failed_run"], o[0]["kind"], o[0].get("schedule","-"), rate) if o else print(0, "-", "-", rate)
except Exception: print(-1, "error", "-", "-")' <<< "$res")"
  found=$(grep -o 'pool: [a-z-]* (after [^)]*)' "$work/stderr" | sort -u | tr '\n' ' ')
  replays=-
  if [ "$sched" != - ] && [ -f "$sched" ] && [ -n "$build" ]; then
    # Ten replays in one process of the instrumented test binary that
    # verify test built (kept): each must follow the schedule and
    # reproduce its checksum.
    # Each replay in a fresh process, as verify test --replay makes it:
    # state a library keeps across runs (a sync.Once done, a sync.Pool)
    # would otherwise differ from the failing run's.
    flags=(-overlay="$build/overlay.json")
    [ -f "$build/go.mod" ] && flags+=(-modfile="$build/go.mod" -mod=mod)
    (cd "$work" && go test -c -o "$work/replay.test" "${flags[@]}" "$pkg") > "$work/replay" 2>&1
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      # verify test's default, early timers, as the search ran.
      (cd "$work/$pkg" && EXECSPEC_SCHEDULE="$sched" EXECSPEC_EARLY_TIMERS=1 EXECSPEC_REPORT="$work/replays.jsonl" "$work/replay.test" -test.run "$test") >> "$work/replay" 2>&1
    done
    # rt marks a replay "replayed" only if it made the schedule's choices
    # and reproduced its steps and checksum.
    want=$(sed -n 's/^checksum //p' "$sched")
    replays=$(grep "\"replayed\":true" "$work/replays.jsonl" 2>/dev/null | grep -c "\"checksum\":\"$want\"")
  fi
  [ -n "$build" ] && rm -rf "$build"
  case "$expect" in
    pass) [ "$failed" = 0 ] && verdict=ok || verdict=UNEXPECTED ;;
    fail*) want=${expect#fail }
      if [ "$failed" -gt 0 ] && { grep -q "pool: $want" "$work/stderr" || [ "$want" = no-hang -a "$kind" = deadlock ] || [ "$kind" = panic -o "$kind" = leak -o "$kind" = deadlock ]; }; then verdict=ok; else verdict=UNEXPECTED; fi ;;
  esac
  [ "$verdict" = ok ] || fails=$((fails+1))
  printf '%-10s %-22s expect %-20s run %-5s of %-5s %-8s replays %s/10 %4ss (%s runs)\n' "$verdict" "$lib" "$expect" "$failed" "$runs" "$kind" "$replays" "$secs" "$rate"
  printf '           cases %s, known: %s, load %s\n' "${cases:--}" "${known:-none}" "${load:--}"
  [ -n "$found" ] && printf '           found: %s\n' "$found"
  if [ "$replays" = 0 ]; then grep -v '^\s' "$work/replay" | cut -c1-300 | head -8; fi
  if [ "$verdict" != ok ]; then grep -E 'pool: |FAIL|panic|deadlock|leak|verify test:' "$work/stderr" | cut -c1-300 | head -8; fi
  rm -rf "$work"
done
exit $fails
