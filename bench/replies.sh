#!/usr/bin/env bash
# Round trips and wall time of `vesper run`, batched replies against earliest, on the
# ideal network and on each preset, for an all-to-all, a random workload and a ring;
# with the legacy client's 500-byte replies (the default) and with no reply limit
# (`--reply-limit 0`, replies read whole: what a reply's size costs).
# Usage: bench/replies.sh [VESPER]   (default: target/release/vesper)
set -euo pipefail
vesper=${1:-target/release/vesper}
networks=("--network ideal --bandwidth 250" "--preset crossbar" "--preset kary-ntree" "--preset fat-tree"
          "--preset hypercube" "--preset torus-3d" "--preset two-rail-fat-tree")
workloads=("--workload all-to-all --tasks 64 --size 4096" "--workload random --tasks 64"
           "--workload ring --tasks 64")
printf "%-32s %-44s %6s %8s %8s %6s %8s %8s\n" network workload limit "rt early" "rt batch" ratio \
  "s early" "s batch"
for n in "${networks[@]}"; do
  for w in "${workloads[@]}"; do
    for limit in 500 0; do
      row=()
      for mode in earliest batched; do
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        rt=$($vesper run $n $w --replies $mode --reply-limit $limit --client-spin-us 0 --json 2>/dev/null |
             python3 -c 'import json,sys; print(json.load(sys.stdin)["server"]["simulation"]["sync_round_trips"])')
        row+=("$rt" "$(echo "$(date +%s.%N) - $start" | bc)")
      done
      printf '%-32s %-44s %6s %8s %8s %6.2f %8.2f %8.2f\n' "$n" "$w" "$limit" "${row[0]}" "${row[2]}" \
        "$(echo "${row[2]} / ${row[0]}" | bc -l)" "${row[1]}" "${row[3]}"
    done
  done
done
