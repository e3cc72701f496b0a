#!/usr/bin/env bash
# Wormhole switches whole and split: the coarse path against a build from before its
# events were ordered by device (BEFORE, a vesper binary), and the fine path whole
# against split in two on threads (NOW, this build). Usage:
#   BEFORE=path/to/old/vesper NOW=target/release/vesper bash bench/wormhole_split.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NOW=${NOW:-target/release/vesper}
BEFORE=${BEFORE:?set BEFORE to a vesper binary built before the change}
N=bench/8-ary-3-tree.toml
args="--load 0.3 --measure 3000 --json"
run() { /usr/bin/time -f "%e %M" -o /tmp/tt "$@" > /tmp/out.json 2>/tmp/err.txt; echo "$(cat /tmp/tt) $(python3 -c "import json; p=json.load(open('/tmp/out.json'))[0]['points'][0]; print(p['events'], p['latency']['mean'])")"; }
for i in 1 2 3 4 5; do
  echo "coarse before: $(run "$BEFORE" traffic --network $N $args)"
  echo "coarse after:  $(run "$NOW" traffic --network $N $args)"
done
for i in 1 2 3; do
  echo "fine P1: $(run "$NOW" traffic --network $N --granularity fine $args)"
  echo "fine P2: $(run "$NOW" traffic --network $N --granularity fine --partitions 2 $args)"
done
