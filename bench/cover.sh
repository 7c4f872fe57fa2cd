#!/usr/bin/env bash
# Spec coverage figures for BENCHMARKS.md: the strategies side by side on
# the same configurations, the six deep mutants, and what coverage tracking
# costs per controlled run. About 25 minutes on 2 cores.
#
#   bash bench/cover.sh            # COVER_SECONDS=120 by default
#   COVER_SECONDS=30 bash bench/cover.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${STRATEGIES:-}" ]; then
	# Only the strategies named, side by side on worksteal W2 T3 K1
	# local-cap 2, each for COVER_SECONDS (default 30) or COVER_RUNS runs:
	#   STRATEGIES="exhaustive dfs random guided" COVER_SECONDS=30 bash bench/cover.sh
	#   STRATEGIES="exhaustive dfs random guided" COVER_RUNS=20000 bash bench/cover.sh
	go build -o /tmp/verify-cover-bench ./cmd/verify
	budget=(--time "${COVER_SECONDS:-30}s")
	if [ -n "${COVER_RUNS:-}" ]; then budget=(--runs "$COVER_RUNS"); fi
	echo "# $(date -u +%FT%TZ) $(go version) load: $(cut -d' ' -f1-3 /proc/loadavg); budget ${budget[*]}"
	echo "| strategy | runs | seconds | states | transitions | outside |"
	echo "|---|---|---|---|---|---|"
	for s in $STRATEGIES; do
		j=$(/tmp/verify-cover-bench cover -q --executor worksteal --workers 2 --tasks 3 --pendings 1 --local-cap 2 --strategy "$s" "${budget[@]}" --json || true)
		f() { printf '%s\n' "$j" | sed -n "s/^  \"$1\": \([0-9.]*\),\{0,1\}$/\1/p" | head -1; }
		printf '| %s | %s | %.1f | %s (%.1f %%) | %s (%.1f %%) | %s |\n' "$s" "$(f runs)" "$(f elapsed_seconds)" "$(f visited_states)" "$(f state_percent)" "$(f visited_transitions)" "$(f transition_percent)" "$(f outside)"
	done
	rm -f /tmp/verify-cover-bench
	echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
echo "# $(date -u +%FT%TZ) $(go version) load: $(cut -d' ' -f1-3 /proc/loadavg)"
EXECSPEC_LONG=1 COVER_SECONDS="${COVER_SECONDS:-120}" go test ./properties/coverage -run '^TestCoverBenchmarks$' -v -timeout 90m | sed -n '/^    long_test.go:[0-9]*: $/,$p' | tail -n +2
echo "# overhead: one controlled run of the reference workload, the run and its projection, the projection alone; 6 interleaved repetitions"
go test -c -o /tmp/props.test ./properties/coverage
(cd properties/coverage && for i in 1 2 3 4 5 6; do /tmp/props.test -test.run XXX -test.bench 'BenchmarkCoverRun' -test.benchtime 1s -test.benchmem | grep Benchmark; done)
rm -f /tmp/props.test
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
