#!/usr/bin/env bash
# Bubble flow control with credits that travel up the cable (a freed slot is known
# upstream one cable delay later), against a build from before, where the output read
# the far buffer at once (BEFORE, a vesper binary): accepted load and latency of the
# torus-3d preset (8×8×8, 1 KiB packets, 25 ns cables) from low load to saturation,
# and the wall time of each. Then the fine path whole against split in two on threads.
# Usage:
#   BEFORE=path/to/old/vesper NOW=target/release/vesper bash bench/bubble_credits.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NOW=${NOW:-target/release/vesper}
BEFORE=${BEFORE:?set BEFORE to a vesper binary built before the change}
args="--preset torus-3d --measure 3000 --json"
run() {
  /usr/bin/time -f "%e" -o /tmp/bubble-time "$@" > /tmp/bubble-out.json 2>/dev/null
  python3 - "$(cat /tmp/bubble-time)" <<'PY'
import json, sys
p = json.load(open('/tmp/bubble-out.json'))[0]['points'][0]
print(f"accepted {p['accepted_load']:.4f} latency {p['latency']['mean']:10.1f} ns "
      f"p99 {p['latency']['p99']:10.1f} events {p['events']:>9} wall {sys.argv[1]} s")
PY
}
for load in 0.1 0.2 0.3 0.4 0.6; do
  for i in 1 2; do
    echo "load $load before: $(run "$BEFORE" traffic $args --load $load)"
    echo "load $load now:    $(run "$NOW" traffic $args --load $load)"
  done
done
for i in 1 2 3; do
  echo "fine P1: $(run "$NOW" traffic $args --load 0.2 --granularity fine)"
  echo "fine P2: $(run "$NOW" traffic $args --load 0.2 --granularity fine --partitions 2)"
done
