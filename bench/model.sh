#!/usr/bin/env bash
# The network model without sockets: uniform random traffic of single-packet messages
# (4 KiB + 16 B) on a 256-host crossbar, then on the 256-host fat tree, per switch kind,
# at 10 %, 50 % and 90 % of the measured saturation throughput; then memory against
# network size.
# Usage: bench/model.sh   (from the repository root)
set -euo pipefail
cargo build --release --bin vesper >/dev/null
v=./target/release/vesper
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
for switch in output-queued cioq wormhole; do
  echo "== $switch"
  VESPER_LOG=warn $v bench model --switch "$switch" --of-saturation --duration-us 50000
done
echo "== the same on the 256-host two-level fat tree (preset fat-tree, d-mod-k), per switch kind"
for switch in output-queued cioq wormhole; do
  echo "== fat-tree, $switch"
  VESPER_LOG=warn $v bench model --preset fat-tree --switch "$switch" --of-saturation --duration-us 50000
done
echo "== wormhole, one event per flit (the fine path), for the ratio"
VESPER_LOG=warn $v bench model --switch wormhole --fine --of-saturation --duration-us 5000
echo "== memory against size (output-queued, 50 % load, 20 ms)"
for hosts in 256 1024 4096 16384; do
  VESPER_LOG=warn $v bench model --hosts "$hosts" --loads 0.5 --duration-us 20000 | tail -1
done
