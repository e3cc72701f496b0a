#!/usr/bin/env bash
# Same inputs, same outputs: runs one set of vesper and map2topo commands with two
# builds and compares everything they print and write, byte for byte. Made to show that
# a change meant to be invisible (the network description layer's redesign: flags, TOML
# files, presets, maps → model) gives the same reports, tables, traces and error
# messages as before.
#
# Usage: bench/same_outputs.sh OLD_DIR NEW_DIR
#   OLD_DIR and NEW_DIR each hold a `vesper` and a `map2topo` binary, e.g.
#   target/release of two work trees. Prints one line per case, `same` or `DIFFERENT`
#   (with the start of the diff), or `FAILED` when OLD itself did not do what the case
#   expects (succeed, or refuse with an error); exits 1 if any case is not `same`.
#   ONLY=REGEX runs only the cases whose names match; KEEP=1 keeps the outputs (they
#   are kept anyway when a case is not `same`, and the folder is named at the end).
#
# How: every case runs in an empty folder $WORK/cwd, first with OLD's binaries, then
# with NEW's, and the folder is moved aside after each run, so both runs see the same
# working directory and the same relative file names (inputs are ../in/...), and any
# path an output holds is the same. Compared: standard output, standard error, the exit
# status and every file written. Before comparing, and only in standard output,
# standard error, *.json, *.log and *.txt files, these wall-clock or machine-dependent
# values are masked:
#   - the report's `wall` object (`vesper run --json`, result.json, `serve --stats`):
#     wall_seconds, events_per_second and reply_latency_us are timings of this machine;
#   - `wall_seconds` and `build_seconds` of each `vesper traffic --json` point;
#   - the table's `wall: build X s, simulate Y s; Z M flit-hops per simulating second`
#     (its event count is kept) and `peak memory of the process: X MiB`;
#   - a split run's windows per wall second (`(N a wall second)`);
#   - the timestamp at the start of log lines (`vesper serve` logs at info).
# Paraver traces are compared unmasked: their header date is fixed (`--trace-date`
# defaults to 01/01/2026 at 00:00), and .prv.gz files are compared as written.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 OLD_DIR NEW_DIR   (each holding vesper and map2topo)" >&2
  exit 2
fi
declare -A BINS
for side in old new; do
  dir=$([[ $side == old ]] && echo "$1" || echo "$2")
  for tool in vesper map2topo; do
    [[ -x $dir/$tool ]] || { echo "$0: $dir/$tool: not an executable" >&2; exit 2; }
  done
  BINS[$side]=$(cd "$dir" && pwd)
done
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The same environment for both: no backtraces (they name the build's source paths),
# each command's default log level, the C locale.
export RUST_BACKTRACE=0 RUST_LIB_BACKTRACE=0 LC_ALL=C
unset VESPER_LOG RUST_LOG

WORK=$(mktemp -d "${TMPDIR:-/tmp}/same-outputs.XXXXXX")
IN=$WORK/in
mkdir -p "$IN" "$WORK/out"
FAILURES=0
CASES=0
START=$SECONDS

# The commands of a case call these, which run the binaries of the side being run.
vesper() { "$BIN/vesper" "$@"; }
map2topo() { "$BIN/map2topo" "$@"; }

# Masks the wall-clock and machine-dependent values (listed at the top) in place.
normalise() {
  find "$1" -type f \( -name '@stdout' -o -name '@stderr' -o -name '*.json' -o -name '*.log' -o -name '*.txt' \) -print0 |
    xargs -0 -r perl -0777 -pi -e '
      s/("wall":\s*)(\{(?:[^{}]++|(?2))*\})/$1"<masked: wall clock>"/g;
      s/("(?:wall|build)_seconds":\s*)-?[0-9][0-9.eE+-]*/$1"<masked>"/g;
      s/^wall: build \S+ s, simulate \S+ s; \S+ M flit-hops per simulating second/wall: build <masked> s, simulate <masked> s; <masked> M flit-hops per simulating second/mg;
      s/^(peak memory of the process: )\S+ MiB/$1<masked> MiB/mg;
      s/\(\d+ a wall second\)/(<masked> a wall second)/g;
      s/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/<time>/mg;
    '
}

# check ok|err NAME COMMAND...: runs COMMAND (a command line, or a function of commands
# below) with OLD's binaries then NEW's, and compares. `ok`: OLD must succeed; `err`:
# OLD must fail (then what matters is its standard error and exit status).
check() {
  local expect=$1 name=$2 side status
  shift 2
  if [[ -n ${ONLY:-} && ! $name =~ $ONLY ]]; then return 0; fi
  CASES=$((CASES + 1))
  local out=$WORK/out/$name
  mkdir -p "$out"
  for side in old new; do
    rm -rf "$WORK/cwd"
    mkdir "$WORK/cwd"
    set +e
    (
      set -e
      cd "$WORK/cwd"
      BIN=${BINS[$side]}
      "$@"
    ) >"$WORK/stdout" 2>"$WORK/stderr" </dev/null
    status=$?
    set -e
    mv "$WORK/cwd" "$out/$side"
    mv "$WORK/stdout" "$out/$side/@stdout"
    mv "$WORK/stderr" "$out/$side/@stderr"
    echo "$status" >"$out/$side/@exit"
    if [[ $side == old ]] && { [[ $expect == ok && $status -ne 0 ]] || [[ $expect == err && $status -eq 0 ]]; }; then
      printf '%-9s %s (OLD exited %s, expected %s)\n' FAILED "$name" "$status" \
        "$([[ $expect == ok ]] && echo success || echo an error)"
      head -n 5 "$out/old/@stderr" | sed 's/^/          /'
      FAILURES=$((FAILURES + 1))
      return 0
    fi
  done
  normalise "$out/old"
  normalise "$out/new"
  if diff -r -q "$out/old" "$out/new" >/dev/null; then
    printf '%-9s %s\n' same "$name"
  else
    printf '%-9s %s\n' DIFFERENT "$name"
    # The whole diff is kept in out/CASE/diff; its start is shown (awk reads it all, so
    # that no pipe is closed early under pipefail).
    (cd "$out" && diff -r -u old new >diff || true)
    awk '!/^(---|\+\+\+) / && n++ < 12' "$out/diff" | cut -c1-160 | sed 's/^/          /'
    FAILURES=$((FAILURES + 1))
  fi
}

# ---------------------------------------------------------------- inputs
# Network files of every kind, each small enough to run in well under a second.
cat >"$IN/kary-wormhole.toml" <<'EOF'
[network]
kind = "kary-ntree"
k = 4
n = 2
routing = "s-mod-k"
switch = "wormhole"
flit_bytes = 16
buffer_bytes = 1024
arbitration = "oldest-first"
EOF
cat >"$IN/torus-cioq.toml" <<'EOF'
[network]
kind = "torus"
dims = [4, 4]
hosts_per_switch = 2
switch = "cioq"
speedup = 2
virtual_output_queues = true
link_latency_ns = 10
EOF
cat >"$IN/two-rails.toml" <<'EOF'
[network]
kind = "multi-rail"
rail_policy = "size-threshold"
rail_threshold_bytes = 4096
link_bandwidth_mbs = 500
[[network.rails]]
preset = "kary-ntree"
[[network.rails]]
kind = "xgft"
m = [8, 8]
w = [1, 4]
switch = "cioq"
EOF
cat >"$IN/thin-tree-levels.toml" <<'EOF'
[network]
kind = "kary-ntree"
k = 4
n = 3
k_up = 2
routing = "random"
seed = 7
nodes_per_host = 2
[network.levels.2]
switch = "cioq"
speedup = 2
EOF
cat >"$IN/crossbar-mapped.toml" <<'EOF'
[network]
kind = "crossbar"
hosts = 8
mapping = "tasks.map"
interleave = "fifo"
packet_payload_bytes = 1024
packet_header_bytes = 32
EOF
printf 'host7\nhost6\n5  # by number\nhost4\nhost3\nhost2\nhost1\nhost0\n# the end\n' >"$IN/tasks.map"
cat >"$IN/ideal.toml" <<'EOF'
[network]
kind = "ideal"
hosts = 16
bandwidth_mbps = 300
latency_ns = 1500
EOF
cat >"$IN/preset-overlay.toml" <<'EOF'
[network]
preset = "fat-tree"
buffer_bytes = 2048
initial_pointer = 3
EOF
cat >"$IN/hypercube-wormhole.toml" <<'EOF'
[network]
kind = "hypercube"
dimensions = 4
switch = "wormhole"
bubble = false
EOF
cat >"$IN/mesh-wormhole.toml" <<'EOF'
[network]
kind = "mesh"
dims = [4, 4]
switch = "wormhole"
routing_latency_ns = 50
EOF
cat >"$IN/xgft-xgft.toml" <<'EOF'
[network]
kind = "xgft"
m = [4, 8]
w = [1, 2]
routing = "shortest-path"
link_bandwidth_mbs = 125
EOF
# A communication pattern of client nodes for pattern-aware routing, and one of host
# names for map2topo conflicts.
printf '# two phases\n0 4\n1 5\n2 6\n3 7\nphase\n0 8\n8 0\n' >"$IN/phases.txt"
printf 'host0 host9\nhost1 host10\nhost2 host11\nphase\nhost3 host12\n' >"$IN/host-phases.txt"
# A map whose blocks have types, and a network file giving the types models.
printf '%s\n' 's - "sw0" 8' '0 h - "n0" 0' '7 s - "sw1" 4' 'type xbar32' '' \
  's - "sw1" 8' '2 h - "n1" 0' '4 s - "sw0" 7' 'type xbar16' '' \
  'h - "n0" 1' '0 s - "sw0" 0' 'type lanai9' '' 'h - "n1" 1' '0 s - "sw1" 2' >"$IN/typed.map"
printf '[network]\nkind = "map"\nmap = "typed.map"\n[network.models.xbar16]\nswitch = "cioq"\nspeedup = 2\n[network.models.lanai9]\npacket_payload_bytes = 1024\n' \
  >"$IN/typed-map.toml"
# Mistakes, for the error cases.
printf '[network]\nkind = "crossbar"\nhostz = 8\n' >"$IN/bad-unknown-field.toml"
printf '[network]\nkind = "crossbar"\nk = 4\n' >"$IN/bad-field-for-kind.toml"
printf '[network]\nkind = "kary-ntree"\nk = 4\nn = 2\nk_up = 5\n' >"$IN/bad-k-up.toml"
printf '[network]\nkind = "kary-ntree"\nk = 2\nn = 2\nrouting = "dimension-order"\n' >"$IN/bad-routing.toml"
printf '[network]\nkind = "torus"\ndims = [4, 4]\nswitch = "wormhole"\nbubble = false\n' >"$IN/bad-no-bubble.toml"
printf '[network]\nkind = "crossbar"\nhosts = 8\nmapping = "bad-tasks.map"\n' >"$IN/bad-mapping.toml"
printf 'host0\nhost9\n' >"$IN/bad-tasks.map"
printf '[network]\nkind = "xgft"\nm = [4, 4]\nw = [2, 4]\n' >"$IN/bad-w1.toml"
printf '[network]\nkind = "crossbar"\nhosts = [\n' >"$IN/bad-syntax.toml"
printf '[network]\nkind = "crossbar"\nhosts = 4\nswitch = "wormhole"\nbuffer_bytes = 16\n' >"$IN/bad-small-buffers.toml"
printf '[network]\nkind = "ideal"\nbandwidth_mbps = -1\n' >"$IN/bad-ideal.toml"
printf '[network]\nkind = "map"\nmap = "typed.map"\n[network.models.xbar64]\nswitch = "cioq"\n' >"$IN/bad-model-type.toml"
printf '[network]\nkind = "map"\nmap = "typed.map"\n[network.models.lanai9]\nswitch = "cioq"\n' >"$IN/bad-model-host.toml"
printf '[network]\nkind = "multi-rail"\n[[network.rails]]\npreset = "nosuch"\n' >"$IN/bad-rail-preset.toml"
# The example traces.
cp "$REPO/examples/pingpong.dim" "$REPO/examples/pingpong.cfg" "$REPO/examples/threads.dim" "$IN/"

# A run small enough for seconds, even traced on the wormhole networks' fine path.
SMALL=(--workload all-to-all --tasks 16 --size 8192)
# A free TCP port for the serve cases (the same for both sides: it shows in outputs).
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
  echo $((20000 + RANDOM % 20000)))

# ---------------------------------------------------------------- the cases' commands
# A preset described: the summary as text and JSON, its network file, a Graphviz
# picture, and the network written as a map with its routes.
topo_preset() {
  vesper topo --preset "$1" >summary.txt
  vesper topo --preset "$1" --json >summary.json
  vesper topo --preset "$1" --print >preset.toml
  vesper topo --preset "$1" --dot net.dot --write-map net.map --write-routes net.routes
}
# A network (a file, or --map) described: text, JSON, picture.
topo_network() {
  vesper topo "$@" >summary.txt
  vesper topo "$@" --json >summary.json
  vesper topo "$@" --dot net.dot
}
# A run on a network (given as flags), traced: the text result on standard output, the
# result and report JSON (out/result.json), the application trace (out/app.*) and the
# network trace (net.prv/.pcf/.row, a traced network takes the fine path); then the
# same run untraced (the coarse path) as JSON.
run_traced() {
  vesper run "$@" --output out --trace net.prv
  vesper run "$@" --json >untraced.json
}
# A server with a network and --stats/--trace, and `vesper run --server` replaying a
# ring against it; the server's log lines that do not depend on timing are kept.
serve_and_replay() {
  vesper serve --listen "127.0.0.1:$PORT" --stats stats.json --trace serve.prv "$@" 2>serve.all &
  local server=$!
  if ! vesper run --server "127.0.0.1:$PORT" --server-wait 20 --workload ring --tasks 8 --size 4096 --json >client.json; then
    kill "$server"
    wait "$server" || true
    return 1
  fi
  wait "$server"
  grep -E 'listening on|network trace|report written' serve.all >serve.log
  rm serve.all
}
# Maps and routes made by map2topo and `vesper topo`, checked, converted; OLD's are
# then the inputs of the map cases.
make_maps() {
  map2topo xgft 2 8,8 1,4 -o tree.map --routes tree.routes
  map2topo xgft 2 8,8 1,4 --routing s-mod-k --format myrinet -o tree-smodk.map --routes tree.myrinet.routes
  map2topo torus 4,4 --hosts-per-switch 2 -o torus.map --routes torus.routes
  map2topo torus 3,3 --mesh -o mesh.map --routes mesh.routes
  map2topo hypercube 3 -o cube.map --routes cube.routes
  map2topo check tree.map --routes tree.routes
  map2topo check torus.map --routes torus.routes
  map2topo check tree.map --routes tree.myrinet.routes
  map2topo routes tree.map --algorithm up-down -o updown.routes
  map2topo routes tree.map --algorithm shortest-path --paths 2 -o multipath.routes
  map2topo convert tree.map tree.routes --to myrinet -o converted.routes
  map2topo conflicts tree.map tree.routes ../in/host-phases.txt
  vesper topo --preset kary-ntree --write-map kary.map --write-routes kary.routes
  vesper topo --preset two-rail-fat-tree --write-map rails.map --write-routes rails.routes
}
# A .dim replay over the default network, traced, with the replayed trace saved.
dim_traced() {
  vesper run ../in/pingpong.dim --output out --trace net.prv --save-trace saved.dim
  vesper run ../in/pingpong.dim --json >untraced.json
}
# Traffic: the sweep's table, its JSON and its plot.
traffic_sweep() {
  vesper traffic --sweep 0.1:0.9:0.2 >table.txt
  vesper traffic --sweep 0.1:0.9:0.2 --json >sweep.json
  vesper traffic --sweep 0.1:0.9:0.2 --svg curve.svg
}

# ---------------------------------------------------------------- presets
# The preset list itself, then every preset: described, and run (traced and not).
check ok topo.presets vesper topo --presets
mapfile -t PRESETS < <("${BINS[old]}/vesper" topo --presets | awk '{print $1}')
for p in "${PRESETS[@]}"; do
  check ok "topo.preset.$p" topo_preset "$p"
done
for p in "${PRESETS[@]}"; do
  check ok "run.preset.$p" run_traced --preset "$p" "${SMALL[@]}"
done
# Split: every preset on two partitions (threads), traced and not, and a CIOQ network
# file; wormhole presets step flit by flit, the path that splits.
run_split() {
  vesper run --partitions 2 "$@" --json >untraced.json
  vesper run --partitions 2 "$@" --trace net.prv --json >traced.json
}
for p in "${PRESETS[@]}"; do
  fine=()
  case $p in
    crossbar) continue ;; # one switch: nothing to split
    kary-ntree | hypercube) ;;
    *) fine=(--granularity fine) ;;
  esac
  check ok "run.split.$p" run_split --preset "$p" "${fine[@]}" "${SMALL[@]}"
done
check ok run.split.file.torus-cioq run_split --network ../in/torus-cioq.toml "${SMALL[@]}"
check ok traffic.split vesper traffic --preset fat-tree --granularity fine --partitions 2 --load 0.3 --json
# `vesper run` with no arguments: the fat-tree preset and seed 004's all-to-all.
check ok run.default vesper run
check ok run.default.json vesper run --json

# ---------------------------------------------------------------- the ideal network
check ok run.ideal run_traced --network ideal --bandwidth 250 --latency 1000 "${SMALL[@]}"
check ok run.ideal.no-server vesper run --network ideal --bandwidth 250 --no-server "${SMALL[@]}" --json
check ok run.ideal.file vesper run --network ../in/ideal.toml "${SMALL[@]}" --json

# ---------------------------------------------------------------- network files
# Each kind of file described and run: a k-ary n-tree of wormhole switches, a torus of
# CIOQ switches, a multi-rail network (a preset rail and a CIOQ XGFT rail), a thin tree
# with a level of its own switches and 2 nodes per host, a crossbar with a task
# mapping file, a preset with fields changed, a hypercube and a mesh of wormhole
# switches, an XGFT.
for f in kary-wormhole torus-cioq two-rails thin-tree-levels crossbar-mapped preset-overlay \
  hypercube-wormhole mesh-wormhole xgft-xgft; do
  check ok "topo.file.$f" topo_network "../in/$f.toml"
done
for f in kary-wormhole torus-cioq two-rails thin-tree-levels preset-overlay hypercube-wormhole \
  mesh-wormhole xgft-xgft; do
  check ok "run.file.$f" run_traced --network "../in/$f.toml" "${SMALL[@]}"
done
check ok run.file.crossbar-mapped run_traced --network ../in/crossbar-mapped.toml --workload all-to-all --tasks 8 --size 8192

# The network trace's own options, on a multi-rail network (rail-prefixed names), gzip
# compressed; then a selection by level on the torus.
check ok run.trace.options-gz vesper run --preset two-rail-fat-tree "${SMALL[@]}" --trace net.prv.gz --trace-quantum 512 \
  --trace-backlog both --trace-end-to-end --trace-devices 'r1.*,r0.host1?' --trace-window 1000:200000 --json
check ok run.trace.levels vesper run --preset torus-3d "${SMALL[@]}" --trace net.prv --trace-devices level=1-2 --json

# ---------------------------------------------------------------- flags over files and presets
check ok run.flags.over-file vesper run --network ../in/kary-wormhole.toml --buffer-bytes 2048 \
  --arbitration round-robin --initial-pointer 2 --flit-bytes 8 "${SMALL[@]}" --json
check ok run.flags.crossbar-cioq vesper run --network crossbar --hosts 32 --switch cioq --speedup 2 --voq \
  --link-bandwidth 500 --link-latency 10 --routing-latency 50 --packet-payload 2048 --packet-header 8 \
  --interleave fifo "${SMALL[@]}" --json
check ok run.flags.rail-policy vesper run --preset two-rail-fat-tree --rail-policy striped "${SMALL[@]}" --json
check ok run.flags.rail-threshold vesper run --network ../in/two-rails.toml --rail-threshold 16384 "${SMALL[@]}" --json
check ok run.flags.pattern-aware-workload vesper run --preset fat-tree --routing pattern-aware --workload wrf --tasks 64 --json
check ok run.flags.pattern-aware-file vesper run --preset fat-tree --routing pattern-aware --pattern ../in/phases.txt \
  "${SMALL[@]}" --json
check ok run.flags.random-routing vesper run --preset kary-ntree --routing random --seed 5 --workload random \
  --tasks 64 --messages 200 --json
check ok run.flags.nodes-per-host vesper run --preset kary-ntree --nodes-per-host 2 "${SMALL[@]}" --json
check ok run.flags.mapping vesper run --network crossbar --hosts 8 --mapping ../in/tasks.map --workload ring \
  --tasks 8 --json
check ok run.flags.preset-switch vesper run --preset hypercube --switch wormhole --buffer-bytes 1024 "${SMALL[@]}" --json

# ---------------------------------------------------------------- maps and routes
# The maps and routes made by both sides are compared; OLD's, made in ../in, are the
# inputs of the cases that follow (so that each case shows its own command's change).
check ok map2topo.make-maps make_maps
(cd "$IN" && BIN=${BINS[old]} && make_maps >/dev/null 2>&1) || echo "note: OLD could not make the maps of the map cases" >&2
check ok topo.map.tree topo_network --map ../in/tree.map
check ok topo.map.rails topo_network --map ../in/rails.map
check ok topo.map.torus vesper topo --map ../in/torus.map --routes ../in/torus.routes
check ok run.map.kary-routes run_traced --map ../in/kary.map --routes ../in/kary.routes --workload wrf --tasks 64
check ok run.map.rails vesper run --map ../in/rails.map --routes ../in/rails.r0.routes --routes ../in/rails.r1.routes \
  --switch wormhole --workload wrf --tasks 64 --json
check ok run.map.up-down vesper run --map ../in/tree.map --routing up-down --switch wormhole "${SMALL[@]}" --json
check ok run.map.shortest-path vesper run --map ../in/mesh.map --workload all-to-all --tasks 9 --size 8192 --json
check ok run.map.myrinet-routes vesper run --map ../in/tree.map --routes ../in/tree.myrinet.routes "${SMALL[@]}" --json
check ok run.map.multipath vesper run --map ../in/tree.map --routes ../in/multipath.routes --route-policy round-robin \
  "${SMALL[@]}" --json
check ok run.map.torus-cioq vesper run --map ../in/torus.map --routes ../in/torus.routes --switch cioq "${SMALL[@]}" --json
check ok run.map.models vesper run --network ../in/typed-map.toml --workload ping-pong --json
check ok traffic.map vesper traffic --map ../in/tree.map --routes ../in/tree.routes --load 0.3

# ---------------------------------------------------------------- .dim replays
check ok run.dim.config vesper run ../in/pingpong.dim --config ../in/pingpong.cfg
check ok run.dim.config.ideal vesper run ../in/pingpong.dim --config ../in/pingpong.cfg --network ideal --json
check ok run.dim.config.no-server vesper run ../in/pingpong.dim --config ../in/pingpong.cfg --network ideal --no-server --json
check ok run.dim.no-server vesper run ../in/pingpong.dim --network ideal --bandwidth 250 --no-server
check ok run.dim.traced dim_traced
check ok run.dim.threads vesper run ../in/threads.dim --preset kary-ntree --json

# ---------------------------------------------------------------- vesper traffic
check ok traffic.point vesper traffic --load 0.5
check ok traffic.point.json vesper traffic --preset fat-tree --pattern bit-reversal --load 0.3 --json
check ok traffic.sweep traffic_sweep
check ok traffic.compare-switch vesper traffic --compare-switch output-queued,cioq,wormhole --sweep 0.2:0.6:0.2 --measure 50
check ok traffic.compare-preset vesper traffic --compare-preset kary-ntree,hypercube --sweep 0.2:0.6:0.2 --measure 50 --json
check ok traffic.compare-network vesper traffic --compare-network ../in/torus-cioq.toml,../in/mesh-wormhole.toml \
  --pattern transpose --sweep 0.2:0.6:0.2 --measure 50
check ok traffic.compare-routing vesper traffic --preset fat-tree --compare-routing d-mod-k,random --pattern bit-reversal \
  --sweep 0.2:0.6:0.2 --measure 50
check ok traffic.cycles vesper traffic --cycles --load 0.4 --router-delay 2 --link-delay 1 --measure 5000
check ok traffic.multi-rail vesper traffic --network ../in/two-rails.toml --load 0.3 --measure 50 --json

# ---------------------------------------------------------------- vesper serve
check ok serve.preset serve_and_replay --preset kary-ntree
check ok serve.file serve_and_replay --network ../in/torus-cioq.toml
check ok serve.default serve_and_replay

# ---------------------------------------------------------------- errors: standard error and exit status
check err error.flit-bytes-not-wormhole vesper run --network crossbar --flit-bytes 8
check err error.speedup-not-cioq vesper run --preset kary-ntree --switch wormhole --speedup 2
check err error.no-such-preset vesper topo --preset nosuch
check err error.no-such-preset-run vesper run --preset moebius
check err error.unknown-field vesper run --network ../in/bad-unknown-field.toml
check err error.field-not-for-kind vesper topo ../in/bad-field-for-kind.toml
check err error.toml-syntax vesper topo ../in/bad-syntax.toml
check err error.buffer-bytes-1 vesper run --network crossbar --hosts 4 --switch wormhole --buffer-bytes 1 --tasks 4
check err error.small-buffers-file vesper run --network ../in/bad-small-buffers.toml --tasks 4
check err error.small-buffers-file-traced vesper run --network ../in/bad-small-buffers.toml --tasks 4 --trace t.prv
check err error.small-buffers-serve vesper serve --network ../in/bad-small-buffers.toml
check err error.link-bandwidth-0 vesper run --link-bandwidth 0
check err error.mapping-bad-host vesper run --network ../in/bad-mapping.toml --tasks 2
check err error.k-up-above-k vesper topo ../in/bad-k-up.toml
check err error.xgft-w1 vesper topo ../in/bad-w1.toml
check err error.dimension-order-on-tree-file vesper topo --network ../in/bad-routing.toml
check err error.dimension-order-on-tree-flag vesper run --preset kary-ntree --routing dimension-order
check err error.d-mod-k-on-crossbar vesper topo --network crossbar --routing d-mod-k
check err error.torus-without-bubble vesper topo ../in/bad-no-bubble.toml
check err error.ideal-without-bandwidth vesper run --network ideal
check err error.ideal-bandwidth-negative vesper serve --network ../in/bad-ideal.toml
check err error.traffic-routing-pattern vesper traffic --load 0.1 --routing pattern-aware --routing-pattern ../in/no-such-pattern
check err error.torus-dims-1 vesper topo --preset torus-3d --hosts 3
check err error.rail-seed-not-random vesper run --preset two-rail-fat-tree --switch cioq --speedup 0
check err error.ideal-link-latency vesper run --network ideal --bandwidth 250 --link-latency 3
check err error.ideal-no-topology vesper topo --network ideal --bandwidth 250
check err error.bandwidth-not-ideal vesper run --bandwidth 250
check err error.rail-threshold-one-rail vesper run --preset fat-tree --rail-threshold 100
check err error.rail-threshold-not-size-threshold vesper run --network ../in/two-rails.toml --rail-policy striped
check err error.rail-preset vesper topo ../in/bad-rail-preset.toml
check err error.preset-and-network vesper topo --preset fat-tree --network ideal
check err error.no-such-file vesper run --network no-such-file.toml
check err error.hosts-of-default-run vesper run --hosts 4
check err error.hosts-of-default-traffic vesper traffic --hosts 4 --load 0.1
check err error.no-server-not-ideal vesper run --no-server
check err error.bit-permutation-hosts vesper traffic --preset crossbar --pattern bit-reversal --hosts 6 --load 0.2
check err error.map-one-routes-for-two-rails vesper run --map ../in/rails.map --routes ../in/rails.r0.routes
check err error.map-model-no-type vesper topo ../in/bad-model-type.toml
check err error.map-model-host-switch vesper topo ../in/bad-model-host.toml
check err error.map2topo-wrong-routes map2topo check ../in/tree.map --routes ../in/torus.routes

# ---------------------------------------------------------------- summary
echo "$CASES cases, $FAILURES not the same, in $((SECONDS - START)) s"
if [[ $FAILURES -ne 0 || -n ${KEEP:-} ]]; then
  echo "outputs kept in $WORK (out/CASE/old and out/CASE/new)"
else
  rm -rf "$WORK"
fi
[[ $FAILURES -eq 0 ]]
