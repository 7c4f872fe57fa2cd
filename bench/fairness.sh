#!/usr/bin/env bash
# The default fairness bound on fair designs that state nothing, and the
# stated bounds of every built-in executor and of the catalogue's
# two-worker bases (black box): N cases of the fairness property per design
# (the 10ms time slices N/10), none may fail; then N cases of work-conservation
# on every built-in executor and a FIFO on executor.Kit, under the
# controller, none may fail. Prints one FIGURES line per design.
#
#   bash bench/fairness.sh [N]      # default N=10000
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
PROPERTIES_FAIRNESS_LONG=$n go test -count=1 -timeout 2h -run '^(TestFairnessDefaultNoFalseAlarm|TestWorkConservationNoFalseAlarm)$' -v ./properties/ |
	grep -E '^(--- |ok|FAIL)|FIGURES|false alarm|fairness \(bound|seemingly'
