#!/usr/bin/env bash
# Spec coverage figures for BENCHMARKS.md: the strategies side by side on
# the same configurations, the six deep mutants, and what coverage tracking
# costs per controlled run. About 25 minutes on 2 cores.
#
#   bash bench/cover.sh            # COVER_SECONDS=120 by default
#   COVER_SECONDS=30 bash bench/cover.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "# $(date -u +%FT%TZ) $(go version) load: $(cut -d' ' -f1-3 /proc/loadavg)"
EXECSPEC_LONG=1 COVER_SECONDS="${COVER_SECONDS:-120}" go test ./properties -run '^TestCoverBenchmarks$' -v -timeout 90m | sed -n '/^    coverage_long_test.go:[0-9]*: $/,$p' | tail -n +2
echo "# overhead: one controlled run of the reference workload, the run and its projection, the projection alone; 6 interleaved repetitions"
go test -c -o /tmp/props.test ./properties
(cd properties && for i in 1 2 3 4 5 6; do /tmp/props.test -test.run XXX -test.bench 'BenchmarkCoverRun' -test.benchtime 1s -test.benchmem | grep Benchmark; done)
rm -f /tmp/props.test
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
