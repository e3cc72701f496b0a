#!/usr/bin/env bash
# The partitioned engine against one partition (BENCHMARKS.md, "Partitioned engine"):
# open-loop uniform traffic at load 0.05 on the 32,768-host 32-ary 3-tree and 32×32×32
# torus of output-queued switches (bench/*-oq.toml), 16-flit packets, cycle units, as in
# bench/traffic.sh. Runs alternate between 1 and 2 partitions, ROUNDS times (default 3),
# so that the machine's drift touches both alike; each run's results must be those of
# one partition but for the timings, which the script checks.
# Usage: bench/partitions.sh   (from the repository root; ROUNDS=… MEASURE=… to change)
set -euo pipefail
export RUST_BACKTRACE=0
cargo build --release --bin vesper >/dev/null
v=./target/release/vesper
rounds=${ROUNDS:-3}
measure=${MEASURE:-5000}
partitions=${PARTITIONS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
for net in 32-ary-3-tree-oq torus-32-oq; do
  echo "== $net, load 0.05, $rounds rounds, 1 against $partitions partitions"
  for round in $(seq "$rounds"); do
    for p in 1 "$partitions"; do
      /usr/bin/time -f "%e %M" -o "$tmp/time" \
        $v traffic --threads 1 --cycles --packet-payload 112 --warmup 5000 --measure "$measure" --drain 20000 \
        --network "bench/$net.toml" --load 0.05 --partitions "$p" --json >"$tmp/$p.json"
      read -r wall rss <"$tmp/time"
      events=$(grep -m1 '"events"' "$tmp/$p.json" | tr -dc 0-9)
      echo "round $round: $p partition(s): $wall s wall, $events events, $((rss / 1024)) MiB peak"
    done
    if ! diff <(grep -v seconds "$tmp/1.json") <(grep -v seconds "$tmp/$partitions.json") >/dev/null; then
      echo "ERROR: $partitions partitions did not give the results of one"
      exit 1
    fi
  done
done
