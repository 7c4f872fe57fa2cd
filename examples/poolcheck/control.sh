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
#   bash control.sh replay          # replay every committed schedule once
#
# Prints, per target: the outcome, the run that first failed and its kind,
# replays that matched the schedule's checksum, seconds; then the cases
# run, the acknowledged findings (pool.Library.Known) by kind and the load
# average (1 minute, sampled every 30 s) over the target's run. Needs the
# module proxy.
#
# replay: each */testdata/schedules/*.schedule, with the modfile the
# replays table below gives it (a schedule not in the table is an error),
# is replayed by verify test --replay with its package (its directory),
# test ("# pool.test:") and the instrument pattern of its package's
# targets. Prints, per schedule: matched (the run followed the schedule,
# reproduced its checksum and showed the finding its "# pool.finding:"
# names, reported or acknowledged), diverged, or other (with what the
# replay showed instead); exits with the number not matched.
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
# scratch MODFILE INSTRUMENT makes a scratch copy of the module whose
# go.mod is MODFILE (verify test reads go.mod) and prints its directory.
scratch() {
  local work mod info mdir mver mgo
  work=$(mktemp -d)
  cp -r ants conc errgroup pond pond1 pond21 semaphore "$work"/
  cp "$1" "$work/go.mod"; cp "${1%.mod}.sum" "$work/go.sum"
  sed -i "s#=> ../..#=> $root#" "$work/go.mod"
  # The rewritten code calls generic functions of the runtime: a library
  # whose go.mod says go < 1.18 (ants v2.4.2, v2.7.5) does not compile
  # rewritten. It is copied with its go directive raised, into a directory
  # named as in the module cache (path@version, which tells pool.Library
  # the version), and replaced.
  mod=${2%/...}
  if info=$(cd "$work" && go list -m -f '{{.Dir}}|{{.Version}}|{{.GoVersion}}' "$mod" 2>/dev/null); then
    IFS='|' read -r mdir mver mgo <<< "$info"
    if [ -n "$mgo" ] && [ "$(printf '%s\n1.18\n' "$mgo" | sort -V | head -1)" != 1.18 ]; then
      mkdir -p "$work/lib/$mod@$mver"; cp -r "$mdir/." "$work/lib/$mod@$mver"; chmod -R u+w "$work/lib"
      sed -i "s#^go .*#go 1.18#" "$work/lib/$mod@$mver/go.mod"
      printf '\nreplace %s => ./lib/%s@%s\n' "$mod" "$mod" "$mver" >> "$work/go.mod"
    fi
  fi
  echo "$work"
}
# replay: each committed schedule and the modfile it replays with; its
# package is its directory, its test the file's "# pool.test:", its
# instrument pattern that of the package's rows above. A schedule file
# not listed here is an error.
replays=(
  "ants/testdata/schedules/TestAnts.progress-idle_expiry.schedule|go.mod"
  "ants/testdata/schedules/TestAnts.progress-task_panic.schedule|go.mod"
  "ants/testdata/schedules/TestAnts.progress-worker_retired.schedule|go.mod"
  "ants/testdata/schedules/TestAnts.progress-idle_expiry.v2.7.5.schedule|go.ants275.mod"
  "ants/testdata/schedules/TestAnts.progress-worker_retired.v2.7.5.schedule|go.ants275.mod"
  "conc/testdata/schedules/TestConc.no-hang-task_panic.schedule|go.mod"
  "pond1/testdata/schedules/TestPond1.capacity-Submit.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-crash-drainTasks.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-crash-executeTask.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-crash-maybeStopIdleWorker.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-crash-worker.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-hang-Submit.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-hang-idle_expiry.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-hang-task_end.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-hang-task_panic.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.no-hang-worker_retired.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.progress-Submit.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.progress-idle_expiry.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.progress-task_end.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.progress-task_panic.schedule|go.buggy.mod"
  "pond1/testdata/schedules/TestPond1.progress-worker_retired.schedule|go.buggy.mod"
  "pond21/testdata/schedules/TestPondClose.none-lost-Submit.schedule|go.pond216.mod"
)
if [ "$runs" = replay ]; then
  fails=0
  declare -A modof works
  for r in "${replays[@]}"; do modof[${r%%|*}]=${r#*|}; done
  for f in */testdata/schedules/*.schedule; do
    if [ -z "${modof[$f]:-}" ]; then
      printf '%-9s %s: not in the replays table of control.sh (add it with its modfile)\n' ERROR "$f"; fails=$((fails+1))
    fi
  done
  for r in "${replays[@]}"; do
    IFS='|' read -r sched modfile <<< "$r"
    pkg=./${sched%%/*}
    test=$(sed -n 's/^# pool.test: //p' "$sched" 2>/dev/null)
    finding=$(sed -n 's/^# pool.finding: //p' "$sched" 2>/dev/null)
    want=$(sed -n 's/^checksum //p' "$sched" 2>/dev/null)
    inst=
    for t in "${targets[@]}"; do
      IFS='|' read -r _ tpkg _ _ tinst _ <<< "$t"
      if [ "$tpkg" = "$pkg" ]; then inst=$tinst; break; fi
    done
    if [ ! -f "$sched" ] || [ -z "$test" ] || [ -z "$finding" ] || [ -z "$want" ] || [ -z "$inst" ]; then
      printf '%-9s %s: no such schedule, or no "# pool.test:", "# pool.finding:", checksum, or no row of %s in targets\n' ERROR "$sched" "$pkg"; fails=$((fails+1)); continue
    fi
    # One scratch copy per modfile and library, reused by its schedules.
    key="$modfile|$inst"
    [ -n "${works[$key]:-}" ] || works[$key]=$(scratch "$modfile" "$inst")
    work=${works[$key]}
    # The finding as the suite reports it (pool: PROPERTY (after OP)) or
    # acknowledges it (known defect KEY).
    prop=${finding%%/*}
    if [ "$prop" = "$finding" ]; then said="pool: $prop:"; else said="pool: $prop (after ${finding#*/})"; fi
    start=$(date +%s)
    res=$(cd "$work" && "$verify" test "$pkg" --instrument "$inst" --run "^$test\$" --replay "$PWD/$sched" -q -v --json 2>"$work/stderr")
    secs=$(( $(date +%s) - start ))
    read -r replayed kind sum <<< "$(python3 -c '
import json,sys
try:
  t=json.loads(sys.stdin.read())["tests"][0]
  print("yes" if t.get("replayed") else "no", t.get("kind") or "pass", t.get("checksum") or "-")
except Exception: print("no error -")' <<< "$res")"
    shown=yes
    if grep -qF -- "$said" "$work/stderr"; then seen=reported
    elif grep -qF -- "known defect $finding seen in" "$work/stderr"; then seen=acknowledged
    else
      shown=no
      # What the replay showed instead, reported or acknowledged.
      seen=$({ grep -o 'pool: [a-z-]* (after [^)]*)' "$work/stderr" | sort -u
        sed -n 's/.*known defect \(.*\) seen in .*/\1 (acknowledged)/p' "$work/stderr"; } | paste -sd, - | sed 's/,/, /g')
      seen="absent; seen: ${seen:-nothing}"
    fi
    if [ "$replayed" = yes ] && [ "$shown" = yes ] && { [ "$sum" = - ] || [ "$sum" = "$want" ]; }; then verdict=matched
    elif [ "$kind" = diverged ]; then verdict=diverged
    else verdict=other; fi
    [ "$verdict" = matched ] || fails=$((fails+1))
    printf '%-9s %-72s %-15s %s: %s (%s), replayed %s, %s, %ss\n' "$verdict" "$sched" "$modfile" "$kind" "$finding" "$seen" "$replayed" "checksum ${sum:0:16}/$want" "$secs"
    if [ "$verdict" != matched ]; then grep -E 'diverg|verify test:|panic:' "$work/stderr" | cut -c1-300 | head -6 | sed 's/^/          /'; fi
  done
  for w in "${works[@]}"; do rm -rf "$w"; done
  exit $fails
fi
out=$(mktemp -d)
echo "schedules of findings in $out"
fails=0
for t in "${targets[@]}"; do
  IFS='|' read -r modfile pkg test expect inst lib strategy <<< "$t"
  if [ -n "$match" ] && ! grep -q -- "$match" <<< "$lib"; then continue; fi
  if [ "$only" = fixed ] && [ "${expect%% *}" != pass ]; then continue; fi
  if [ "$only" = buggy ] && [ "${expect%% *}" = pass ]; then continue; fi
  work=$(scratch "$modfile" "$inst")
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
