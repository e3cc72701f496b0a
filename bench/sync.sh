#!/usr/bin/env bash
# Sync round trips: vesper against the Python line server, same client, same run.
# Usage: bench/sync.sh [ROUND_TRIPS]   (from the repository root)
set -euo pipefail
n=${1:-20000}
cargo build --release --bin vesper >/dev/null
port=$((20000 + RANDOM % 20000))
python3 bench/python_line_server.py "$port" &
py=$!
trap 'kill $py 2>/dev/null' EXIT
sleep 0.5
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
for round in 1 2 3; do
  echo "== round $round: vesper"
  VESPER_LOG=warn ./target/release/vesper bench sync --round-trips "$n"
  echo "== round $round: vesper --spin-us 0"
  VESPER_LOG=warn ./target/release/vesper bench sync --round-trips "$n" --spin-us 0
  echo "== round $round: python line server"
  VESPER_LOG=warn ./target/release/vesper bench sync --round-trips "$n" --server "127.0.0.1:$port"
done
