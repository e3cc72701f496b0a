#!/usr/bin/env bash
# The partitioned engine against one partition (BENCHMARKS.md, "Partitioned engine"):
# open-loop uniform traffic at load 0.05 on the 32,768-host 32-ary 3-tree and 32×32×32
# torus of output-queued switches (bench/*-oq.toml), 16-flit packets, cycle units, as in
# bench/traffic.sh. Runs alternate between 1 partition, 2 partitions on threads and,
# when Open MPI's mpirun is here, 2 MPI ranks (one binary, built with the `mpi`
# feature), ROUNDS times (default 3), so that the machine's drift touches all alike;
# each run's results must be those of one partition but for the timings, which the
# script checks. Peak memory is that of the process, or of each rank.
# Usage: bench/partitions.sh   (from the repository root; ROUNDS=… MEASURE=… to change)
set -euo pipefail
export RUST_BACKTRACE=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
modes=(1 "${PARTITIONS:-2}")
if command -v mpirun >/dev/null; then
  cargo build --release --bin vesper --features mpi >/dev/null
  modes+=(mpi)
else
  cargo build --release --bin vesper >/dev/null
fi
v=./target/release/vesper
rounds=${ROUNDS:-3}
measure=${MEASURE:-5000}
ranks=${RANKS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
for net in ${NETWORKS:-32-ary-3-tree-oq torus-32-oq}; do
  echo "== $net, load 0.05, $rounds rounds: ${modes[*]} (partitions, or $ranks MPI ranks)"
  args=(traffic --threads 1 --cycles --packet-payload 112 --warmup 5000 --measure "$measure" --drain 20000
        --network "bench/$net.toml" --load 0.05 --json)
  for round in $(seq "$rounds"); do
    for m in "${modes[@]}"; do
      if [ "$m" = mpi ]; then
        # Each rank timed on its own; the wall clock is mpirun's, start-up included.
        start=$(date +%s.%N)
        mpirun -np "$ranks" --oversubscribe sh -c \
          '/usr/bin/time -f "%e %M" -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$tmp/time" $v "${args[@]}" \
          >"$tmp/$m.json" 2>"$tmp/$m.err"
        wall=$(echo "$(date +%s.%N) - $start" | bc)
        rss=$(for r in $(seq 0 $((ranks - 1))); do cut -d' ' -f2 "$tmp/time.$r"; done | sort -n | tail -1)
        total=$(for r in $(seq 0 $((ranks - 1))); do cut -d' ' -f2 "$tmp/time.$r"; done | paste -sd+ | bc)
        note=$(grep -o '[0-9]* windows ([0-9]* a wall second).*' "$tmp/$m.err" | head -1 || true)
        label="$ranks MPI ranks"
        mem="$((rss / 1024)) MiB peak a rank, $((total / 1024)) MiB in all; $note"
      else
        /usr/bin/time -f "%e %M" -o "$tmp/time" $v "${args[@]}" --partitions "$m" >"$tmp/$m.json"
        read -r wall rss <"$tmp/time"
        label="$m partition(s)"
        mem="$((rss / 1024)) MiB peak"
      fi
      events=$(grep -m1 '"events"' "$tmp/$m.json" | tr -dc 0-9)
      printf 'round %s: %s: %.2f s wall, %s events, %s\n' "$round" "$label" "$wall" "$events" "$mem"
      if ! diff <(grep -v seconds "$tmp/1.json") <(grep -v seconds "$tmp/$m.json") >/dev/null; then
        echo "ERROR: $label did not give the results of one partition"
        exit 1
      fi
    done
  done
done
