#!/usr/bin/env bash
# Open-loop synthetic traffic benchmarks (BENCHMARKS.md, "Synthetic traffic"): simulated
# flit-hops per wall second and peak memory at 512 hosts, then build time and memory of
# 4,096- and 32,768-host trees and tori at low load. One point per process, one thread,
# so that the peak memory is the point's. 16-flit packets (112 B payload + 16 B header,
# 8 B flits), uniform traffic, cycle units.
# Usage: bench/traffic.sh [quick]   (from the repository root)
set -euo pipefail
export RUST_BACKTRACE=0
cargo build --release --bin vesper >/dev/null
v=./target/release/vesper
measure=${MEASURE:-50000}
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
point() {
  local name=$1; shift
  echo "== $name"
  /usr/bin/time -f "process: %e s wall, %M KiB peak resident" \
    $v traffic --threads 1 --cycles --packet-payload 112 --warmup 5000 --measure "$measure" --drain 20000 "$@" 2>&1 |
    grep -E '^ +[0-9]|^wall|^process|^Error|saturated' || true
}
# Two lanes of 16 flits per input, as stop/go buffers: 256 bytes (32 flits); the torus's
# bubble flow control needs two packets below the STOP threshold: 320 bytes.
point "8x8x8 torus, wormhole + bubble, 0.25" --preset torus-3d --buffer-bytes 320 --load 0.25
point "4-ary 3-tree, wormhole, 0.5" --preset kary-ntree --switch wormhole --buffer-bytes 256 --load 0.5
point "4-ary 3-tree, output-queued, 0.5" --preset kary-ntree --load 0.5
point "8-ary 3-tree, wormhole, 0.3" --network bench/8-ary-3-tree.toml --load 0.3
# Large networks at low load: build time and memory first of all.
measure=${MEASURE_LARGE:-5000}
for net in 16-ary-3-tree torus-16 32-ary-3-tree torus-32; do
  point "$net, 0.05" --network "bench/$net.toml" --load 0.05 || true
done
