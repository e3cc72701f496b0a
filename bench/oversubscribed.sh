#!/usr/bin/env bash
# More partitions than cores: the partitions' threads cannot all run at once, so a
# thread that waits at a window's meeting must give its core to one that has not come.
# Compares a build from before (BEFORE, a vesper binary) with this one (NOW) on a
# 16×16 torus of output-queued switches (256 hosts, load 0.1) for 1 to 4 partitions,
# and on a ring of 3 switches split in 3, in alternated rounds. Same results in every
# run (the table rows are printed once per configuration and must agree).
# Usage:
#   BEFORE=path/to/old/vesper NOW=target/release/vesper bash bench/oversubscribed.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
NOW=${NOW:-target/release/vesper}
BEFORE=${BEFORE:?set BEFORE to a vesper binary built before the change}
rounds=${1:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '[network]\nkind = "torus"\ndims = [16, 16]\nhosts_per_switch = 1\npacket_payload_bytes = 112\n' > "$dir/torus.toml"
printf '[network]\nkind = "torus"\ndims = [3]\nhosts_per_switch = 1\n' > "$dir/ring.toml"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
run() { # BINARY NETWORK LOAD PARTITIONS -> "the table's row | wall S s"
  /usr/bin/time -f "%e" -o "$dir/time" "$1" traffic --network "$2" --load "$3" --measure 20000 \
    --partitions "$4" > "$dir/out" 2>/dev/null
  echo "$(grep -E '^ +0\.' "$dir/out") | wall $(cat "$dir/time") s"
}
for round in $(seq "$rounds"); do
  for p in 1 2 3 4; do
    echo "round $round torus P$p before: $(run "$BEFORE" "$dir/torus.toml" 0.1 "$p")"
    echo "round $round torus P$p now:    $(run "$NOW" "$dir/torus.toml" 0.1 "$p")"
  done
  for p in 1 3; do
    echo "round $round ring  P$p before: $(run "$BEFORE" "$dir/ring.toml" 0.2 "$p")"
    echo "round $round ring  P$p now:    $(run "$NOW" "$dir/ring.toml" 0.2 "$p")"
  done
done
