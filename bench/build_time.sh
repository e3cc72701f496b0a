#!/usr/bin/env bash
# Build time and memory of every topology kind at four sizes (BENCHMARKS.md, "Network
# build"): `vesper topo --json` (the description resolved, the summary, the model built,
# nothing simulated) under /usr/bin/time, one process a network. Prints a Markdown
# table: wall seconds, peak resident memory, vesper's own estimate of the model's
# memory (`memory_bytes`, counted from the description before anything is built), and
# the estimate against the peak less the process's baseline (a 2-host crossbar's peak).
#
# Usage: bench/build_time.sh [VESPER]   (from anywhere; VESPER defaults to the
#   repository's target/release/vesper, built first)
#   OLD=path/to/vesper also times the crossbars with that build (before/after), each
#   under prlimit --as=6G (the machine is shared) and a timeout of TIMEOUT seconds (default 150): a build that
#   aborts or takes longer is shown as such.
#   ONLY=REGEX runs only the kinds whose names match.
set -euo pipefail
export RUST_BACKTRACE=0 LC_ALL=C
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -ge 1 ]]; then
  V=$(realpath "$1")
else
  (cd "$REPO" && cargo build --release --bin vesper >/dev/null)
  V=$REPO/target/release/vesper
fi
TIMEOUT=${TIMEOUT:-150}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/build-time.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB; $(date -u +%F)"
echo "vesper: $V"

# The peak of a process whose network is negligible [KiB].
/usr/bin/time -f "%M" -o base.time "$V" topo --hosts 2 --json >/dev/null
BASE_KIB=$(cat base.time)
echo "baseline peak (2-host crossbar): $BASE_KIB KiB"
echo
echo "| kind | size | hosts | switches | cables | wall [s] | peak [MiB] | estimate [MiB] | estimate / (peak − baseline) |"
echo "|---|---|---|---|---|---|---|---|---|"

# row KIND SIZE ARGS...: `vesper topo ARGS --json`, one table row.
row() {
  local kind=$1 size=$2
  shift 2
  if [[ -n ${ONLY:-} && ! $kind =~ $ONLY ]]; then return 0; fi
  if ! /usr/bin/time -f "%e %M" -o run.time "$V" topo "$@" --json >out.json 2>err.txt; then
    echo "| $kind | $size | refused: $(grep -o 'needs about [^(]*' err.txt | head -1 || head -c 120 err.txt) | | | $(cut -d' ' -f1 run.time | tail -1) | | | |"
    return 0
  fi
  read -r wall kib < <(tail -1 run.time)
  python3 - "$kind" "$size" "$wall" "$kib" "$BASE_KIB" <<'EOF'
import json, sys
kind, size, wall, kib, base = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = json.load(open("out.json"))
rails = s if isinstance(s, list) else [s]
hosts = rails[0]["hosts"]
switches = sum(r["switches"] for r in rails)
cables = sum(r["host_cables"] + r["switch_cables"] for r in rails)
# Each rail's estimate alone: their sum bounds the network's (rails are built in turn).
estimate = sum(r["memory_bytes"] for r in rails) / 2**20
peak = kib / 1024
net = (kib - base) / 1024
ratio = f"{estimate / net:.2f}" if net > 1 else "-"
print(f"| {kind} | {size} | {hosts:,} | {switches:,} | {cables:,} | {wall:.2f} | {peak:.1f} | {estimate:.1f} | {ratio} |")
EOF
}

# old KIND SIZE ARGS...: the same with OLD's build, wall time and peak only.
old() {
  local kind=$1 size=$2
  shift 2
  if [[ -z ${OLD:-} ]] || [[ -n ${ONLY:-} && ! $kind =~ $ONLY ]]; then return 0; fi
  local status=0
  timeout "$TIMEOUT" /usr/bin/time -f "%e %M" -o old.time prlimit --as=$((6 << 30)) "$OLD" topo "$@" --json \
    >/dev/null 2>old.err || status=$?
  if [[ $status -eq 124 ]]; then
    echo "| $kind (before) | $size | | | | > $TIMEOUT (stopped) | | | |"
  elif [[ $status -ne 0 ]]; then
    echo "| $kind (before) | $size | $(grep -m1 -o 'memory allocation of [0-9]* bytes failed' old.err || echo "exit $status") | | | $(grep -Eo '^[0-9.]+' old.time | tail -1) | | | |"
  else
    read -r wall kib < <(tail -1 old.time)
    echo "| $kind (before) | $size | | | | $wall | $(awk -v k="$kib" 'BEGIN {printf "%.1f", k / 1024}') | | |"
  fi
}

net() { printf '[network]\n%s\n' "$2" >"$1.toml"; }
# Whether ONLY lets kind $1 run.
wanted() { [[ -z ${ONLY:-} || $1 =~ $ONLY ]]; }

for h in 16000 64000 256000 1024000; do
  row crossbar "$h hosts" --hosts "$h"
  old crossbar "$h hosts" --hosts "$h"
done
for h in 4000 16000 64000 256000; do
  row "crossbar, CIOQ with virtual output queues" "$h hosts" --hosts "$h" --switch cioq --voq
  old "crossbar, CIOQ with virtual output queues" "$h hosts" --hosts "$h" --switch cioq --voq
done
for n in 3 4 5 6; do
  net "tree$n" "kind = \"kary-ntree\"
k = 8
n = $n"
  row "8-ary n-tree (d-mod-k)" "n = $n" "tree$n.toml"
done
for n in 2 3 4 5; do
  net "sp$n" "kind = \"kary-ntree\"
k = 8
n = $n
routing = \"shortest-path\""
  row "8-ary n-tree, shortest-path tables" "n = $n" "sp$n.toml"
done
for m in 2 8 32 128; do
  net "xgft$m" "kind = \"xgft\"
m = [16, 16, $m]
w = [1, 8, 8]"
  row "XGFT(3; 16,16,m; 1,8,8) (d-mod-k)" "m = $m" "xgft$m.toml"
done
for k in 16 32 64 128; do
  net "torus$k" "kind = \"torus\"
dims = [$k, $k, $k]"
  row "torus (dimension order)" "$k³" "torus$k.toml"
done
for k in 128 256 512 1024; do
  net "mesh$k" "kind = \"mesh\"
dims = [$k, $k]"
  row "mesh (dimension order)" "$k²" "mesh$k.toml"
done
for d in 12 14 16 18; do
  net "cube$d" "kind = \"hypercube\"
dimensions = $d"
  row "hypercube (dimension order)" "$d dimensions" "cube$d.toml"
done
for n in 3 4 5 6; do
  net "rails$n" "kind = \"multi-rail\"
[[network.rails]]
kind = \"kary-ntree\"
k = 8
n = $n
[[network.rails]]
kind = \"kary-ntree\"
k = 8
n = $n"
  row "two rails of 8-ary n-trees" "n = $n" "rails$n.toml"
done
for n in 2 3 4 5; do
  net "tree$n" "kind = \"kary-ntree\"
k = 8
n = $n"
  wanted "map of an 8-ary n-tree (shortest-path tables)" || continue
  "$V" topo "tree$n.toml" --write-map "tree$n.map" >/dev/null 2>&1
  row "map of an 8-ary n-tree (shortest-path tables)" "n = $n" --map "tree$n.map"
done
for n in 3 4 5 6; do
  net "four$n" "kind = \"kary-ntree\"
k = 4
n = $n"
  wanted "map of a 4-ary n-tree with its route file" || continue
  "$V" topo "four$n.toml" --write-map "four$n.map" --write-routes "four$n.routes" >/dev/null 2>&1
  row "map of a 4-ary n-tree with its route file" "n = $n ($(du -m "four$n.routes" | cut -f1) MB of routes)" \
    --map "four$n.map" --routes "four$n.routes"
  rm -f "four$n.routes"
done
