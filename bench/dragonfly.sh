#!/usr/bin/env bash
# The 1,056-host dragonfly beside BookSim (BENCHMARKS.md, "Dragonfly beside BookSim"):
# BookSim's dragonflynew of k = 4 with its parameters in cycle units (10-flit packets,
# local cables 10 cycles, global cables 100, injection and ejection channels 1), on CIOQ
# routers of speed-up 2 with virtual output queues (BookSim's input-queued routers run
# their core twice per cycle; their 256-flit VC buffers have no counterpart: vesper's
# queues are unbounded), a 3-cycle routing delay (BookSim's VC and switch allocation and
# switch traversal).
#   1. BookSim's own points, uniform traffic at 0.2 and 0.5, minimal and UGAL, one
#      thread each (the wall per point stands beside BookSim's);
#   2. latency–load curves, minimal / Valiant / UGAL-L, under uniform and group-shift
#      traffic, as tables (and SVG plots when OUT=DIR is given).
# Usage: bench/dragonfly.sh   (from the repository root)
set -euo pipefail
export RUST_BACKTRACE=0
cargo build --release --bin vesper >/dev/null
v=./target/release/vesper
common=(traffic --preset dragonfly --switch cioq --speedup 2 --voq --cycles --size-flits 10
        --link-delay 10 --global-link-delay 100 --host-link-delay 1 --router-delay 3)
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
echo "== BookSim's points: uniform traffic, loads 0.2 and 0.5, one thread"
for routing in minimal ugal; do
  for load in 0.2 0.5; do
    $v "${common[@]}" --routing "$routing" --pattern uniform --load "$load" --threads 1 |
      grep -E '^ +[0-9]|^wall' | sed "s/^/$routing $load: /"
  done
done
for pattern in uniform group-shift; do
  case $pattern in
    uniform) sweep=0.1:1.0:0.1 ;;
    group-shift) sweep=0.02:0.62:0.04 ;;
  esac
  echo "== curves: $pattern traffic, loads $sweep"
  svg=()
  if [ -n "${OUT:-}" ]; then svg=(--svg "$OUT/dragonfly-$pattern.svg"); fi
  $v "${common[@]}" --compare-routing minimal,valiant,ugal --pattern "$pattern" --sweep "$sweep" "${svg[@]}" |
    grep -v '^wall'
done
