#!/usr/bin/env bash
# One simulation over MPI ranks on two machines, two containers standing in for them
# (called by .ci/run after docker/test.sh):
#   1. an image of vesper built with `--features mpi` and Open MPI's runtime, made
#      offline: a Debian base with openmpi-bin from debootstrap (vesper-mpi-base:bookworm,
#      made once and kept), vesper built by cargo on the host (Debian bookworm, the same
#      glibc and Open MPI), the Dockerfile's `prebuilt` stage;
#   2. two containers of it, nodes n1 and n2, on a private Docker network, no ssh;
#   3. `vesper traffic` as ONE MPI job of 2 ranks, one a container, talking over TCP
#      across that network: its JSON equals one process's (wall clock aside), the job
#      map puts one rank on each node, and each container sent the ranks' exchanges;
#   4. containers, network and image tag removed (the base image is kept).
#
# How the job is launched: mpirun runs on the host, with `--host n1,n2`, and starts
# Open MPI's daemon (orted) in each container through a launch agent that is
# `docker exec` instead of ssh. The other way, mpirun inside a container, needs the
# docker CLI and the engine's socket in that container; from the host, the
# containers need nothing but vesper and Open MPI, and the host has mpirun already
# (CI installs openmpi-bin, the same 4.1 as the containers' bookworm: checked below).
# The host joins the containers' network on its bridge, so the daemons reach mpirun
# there: the out-of-band channel and the ranks' TCP transport are both held to that
# subnet. Tree spawn is off, so that the daemons never launch each other (mpirun
# launches both).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=docker/debian.sh
source docker/debian.sh
name="vesper-mpi-test-$$"
image="vesper-mpi:test-$$"
base=vesper-mpi-base:bookworm
nodes=(n1 n2)
work=$(mktemp -d)
started=$(date +%s)

say() { echo "docker/mpi-test.sh: $*"; }
fail() { echo "docker/mpi-test.sh: FAILED: $*" >&2; exit 1; }
cleanup() {
    for node in "${nodes[@]}"; do docker rm -f "$name-$node" >/dev/null 2>&1 || true; done
    docker network rm "$name" >/dev/null 2>&1 || true
    docker rmi "$image" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

command -v mpirun >/dev/null || fail "no mpirun on the host (Debian's openmpi-bin)"
# Open MPI runs as root (CI) only with these two consents; ignored otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# 1. The image: vesper's usual one (the Dockerfile's `prebuilt` stage, user vesper) on
# a base that has Open MPI.
debian_base "$base" openmpi-bin
cargo build --release --locked -p vesper-server --features mpi --bin vesper
mkdir "$work/context"
cp docker/Dockerfile "$work/context/Dockerfile"
strip -o "$work/context/vesper" target/release/vesper
docker build -q --target prebuilt --build-arg RUNTIME_IMAGE="$base" -t "$image" "$work/context" >/dev/null
# A binary built on the host runs in the container only if every library it links
# (libmpi and what it pulls in) is there.
missing=$(docker run --rm --entrypoint ldd "$image" /usr/local/bin/vesper | grep "not found" || true)
[ -z "$missing" ] || fail "libraries missing in the image: $missing"
# mpirun and the daemons it starts speak Open MPI's wire protocol of one version.
host_ompi=$(mpirun --version | sed -n 1p)
image_ompi=$(docker run --rm --entrypoint mpirun "$image" --version | sed -n 1p)
[ "$host_ompi" = "$image_ompi" ] || fail "Open MPI on the host ($host_ompi) is not the image's ($image_ompi)"
say "image $image: vesper with MPI, $image_ompi"

# 2. The nodes: a container each, idle until mpirun starts a daemon in it (--init
# reaps what the daemons leave).
docker network create "$name" >/dev/null
subnet=$(docker network inspect "$name" --format '{{(index .IPAM.Config 0).Subnet}}')
for node in "${nodes[@]}"; do
    docker run -d --init --name "$name-$node" --hostname "$node" --network "$name" \
        --entrypoint sleep "$image" infinity >/dev/null
done
say "nodes ${nodes[*]} on network $subnet"

# The launch agent, called as ssh would be: `agent NODE COMMAND…`, COMMAND one shell
# command line to run on NODE.
cat >"$work/agent" <<EOF
#!/bin/sh
node=\$1
shift
exec docker exec "$name-\$node" sh -c "\$*"
EOF
# Open MPI checks that the agent's first word is a program on every node, the
# containers included (their daemons load the same launcher, and without the agent
# they stop, with a segmentation fault): `sh AGENT` passes there, and without tree
# spawn the daemons never run it.
hosts=$(IFS=,; echo "${nodes[*]}")
mpi=(mpirun --host "$hosts" -np 2 --map-by node --display-map
    --mca plm_rsh_agent "sh $work/agent" --mca plm_rsh_no_tree_spawn 1
    --mca oob_tcp_if_include "$subnet" --mca btl "tcp,self" --mca btl_tcp_if_include "$subnet"
    # Ranks wait by polling. When polling ranks take every core (on two cores), the
    # kernel's work of carrying packets across the bridge waits for a time slice: a
    # window took 12 ms instead of 0.3 ms. Yielding when idle leaves it the CPU.
    --mca mpi_yield_when_idle 1)

# Bytes a node's container has sent on the network.
sent() { docker exec "$name-$1" cat /sys/class/net/eth0/statistics/tx_bytes; }
# The JSON in a file, after what comes before it (the job map), wall clock zeroed.
untimed() {
    python3 - "$1" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
curves = json.loads("".join(lines[lines.index("[\n"):]))
for curve in curves:
    for point in curve["points"]:
        point["wall_seconds"] = point["build_seconds"] = 0
print(json.dumps(curves, indent=1, sort_keys=True))
EOF
}

# 3. Each network: 2 ranks across the nodes, then one process in n1.
for network in kary-ntree hypercube; do
    args=(traffic --load 0.3 --measure 200 --json --preset "$network")
    before=("$(sent n1)" "$(sent n2)")
    "${mpi[@]}" /usr/local/bin/vesper "${args[@]}" >"$work/ranks.out" 2>"$work/ranks.err" \
        || { cat "$work/ranks.out" "$work/ranks.err"; fail "$network: the MPI job failed"; }
    after=("$(sent n1)" "$(sent n2)")
    docker exec "$name-n1" vesper "${args[@]}" >"$work/one.json" 2>"$work/one.err" \
        || { cat "$work/one.err"; fail "$network: vesper in one process failed"; }

    # One rank on each node, and the ranks were two (vesper's note on standard error).
    for node in "${nodes[@]}"; do
        grep -q "Data for node: ${node}[[:space:]].*Num procs: 1$" "$work/ranks.out" \
            || fail "$network: not one rank on $node: $(cat "$work/ranks.out")"
    done
    note=$(grep "MPI ranks" "$work/ranks.err" || true)
    grep -q ": 2 MPI ranks, " <<<"$note" || fail "$network: no note of 2 MPI ranks: $(cat "$work/ranks.err")"
    # The ranks' exchanges went across the network: the bytes vesper says the ranks
    # sent each other (packets and deliveries; the all-reduces come on top) left the
    # two containers, and each of them sent some.
    windows=$(sed -n 's/.*MPI ranks, windows of [^:]*: \([0-9]*\) windows .*/\1/p' <<<"$note")
    per_window=$(sed -n 's/.* \([0-9]*\) bytes exchanged a window.*/\1/p' <<<"$note")
    [ -n "$windows" ] && [ -n "$per_window" ] || fail "$network: an unexpected note: $note"
    n1_sent=$((after[0] - before[0]))
    n2_sent=$((after[1] - before[1]))
    [ $((n1_sent + n2_sent)) -ge $((windows * per_window)) ] && [ "$n1_sent" -gt 0 ] && [ "$n2_sent" -gt 0 ] \
        || fail "$network: n1 and n2 sent $n1_sent and $n2_sent bytes, the ranks $windows x $per_window"

    untimed "$work/ranks.out" >"$work/ranks.json"
    untimed "$work/one.json" >"$work/one.untimed.json"
    diff "$work/one.untimed.json" "$work/ranks.json" >"$work/diff" \
        || { head -n 40 "$work/diff"; fail "$network: 2 ranks differ from one process"; }
    say "$network: 2 ranks, on n1 and n2 (which sent $((n1_sent / 1000)) and $((n2_sent / 1000)) kB" \
        "in $windows windows), give one process's JSON"
done

# 4. Nothing left.
cleanup
left="$(docker ps -aq --filter "name=$name")$(docker network ls -q --filter "name=$name")"
left+="$(docker images -q "$image")"
[ -z "$left" ] || fail "left behind: $left"
say "passed in $(($(date +%s) - started)) s"
