#!/usr/bin/env bash
# A swarm of N bitstate searches as N local processes, then one merged
# verdict. Arguments after the first are passed to every member.
#
#   bash examples/swarm/local.sh 8 --workers 4 --tasks 6 --pendings 2 --bitstate 128
set -euo pipefail
N=${1:?usage: local.sh N [verify model flags...]}; shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d)
(cd "$ROOT" && go build -o "$DIR/verify" ./cmd/verify)
for i in $(seq "$N"); do
  "$DIR/verify" model -q "$@" --swarm "$i/$N" --result "$DIR/swarm-$i-of-$N.json" --out "$DIR/cx" > "$DIR/member-$i.txt" &
done
wait || true
"$DIR/verify" merge "$DIR"/swarm-*-of-"$N".json || true
echo "results and counterexamples in $DIR"
