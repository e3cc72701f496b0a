#!/usr/bin/env bash
# The Docker deployment, tested as a user runs it (called by .ci/run):
#   1. docker/build.sh --offline builds vesper:latest (no registry is reached);
#   2. the compose stack comes up (vesper, view, collector) on its own network;
#   3. a client container sends garbage and stays connected while `replay` replays a
#      trace against the server: the prediction equals `vesper run` of the same trace
#      and network in one process, and the network trace collected through the view
#      equals the trace that run writes with --trace, byte for byte; the view's
#      /api/runs shows the run finished, nothing dropped; the health checks' probes
#      left no warning in the collector's log;
#   4. a client container starts a run and waits; `docker stop` of the server leaves
#      that run's report (finished: false) and exit code 143;
#   5. the stack comes down: no container, network or volume of it is left.
# Traffic goes between the stack's containers only; the host reads files.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
project="vesper-test-$$"
work=$(mktemp -d)
compose=(docker-compose -p "$project" -f "$repo/docker/compose.yaml")
network="${project}_vesper"
started=$(date +%s)

say() { echo "docker/test.sh: $*"; }
fail() { echo "docker/test.sh: FAILED: $*" >&2; exit 1; }
cleanup() {
    docker rm -f "$project-garbage" "$project-waiting" >/dev/null 2>&1 || true
    "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

bash docker/build.sh --offline

# Inputs: the examples and a 16-task all-to-all saved as a Dimemas trace.
mkdir -p "$work/traces" "$work/data" "$work/config" "$work/host"
cp examples/*.dim "$work/traces/"
target/release/vesper run --workload all-to-all --tasks 16 --no-server --network ideal --bandwidth 250 \
    --save-trace "$work/traces/a2a16.dim" >/dev/null
chmod 0777 "$work/data"
export VESPER_DATA="$work/data" VESPER_TRACES="$work/traces" VESPER_CONFIG="$work/config"
export VESPER_TRACE=a2a16.dim VESPER_NETWORK_ARGS="--preset fat-tree" VESPER_PORT=0 VESPER_VIEW_PORT=0

say "stack up"
"${compose[@]}" up -d vesper view collector >/dev/null 2>&1 || { "${compose[@]}" logs; fail "the stack did not come up"; }

# A second client that sends garbage and stays connected through the replay.
docker run -d --name "$project-garbage" --network "$network" --entrypoint bash vesper:latest \
    -c 'exec 3<>/dev/tcp/vesper/10000; printf "HELLO\nSEND 1 2 3\n\x00\xff garbage\nZ" >&3; sleep 30' >/dev/null

say "replay in a container"
"${compose[@]}" run --rm replay >"$work/replay.json" 2>"$work/replay.log" \
    || { cat "$work/replay.log"; "${compose[@]}" logs vesper; fail "the replay failed"; }
target/release/vesper run "$work/traces/a2a16.dim" --preset fat-tree --json \
    --trace "$work/host/network.prv" --trace-date "01/01/2026 at 00:00" >"$work/host.json" 2>/dev/null
predicted() { sed -n 's/^  "predicted_ns": \(.*\),$/\1/p' "$1"; }
served=$(predicted "$work/replay.json")
local_=$(predicted "$work/host.json")
[ -n "$served" ] && [ "$served" = "$local_" ] || fail "prediction $served ns in containers, $local_ ns in one process"
say "prediction $served ns, as in one process"

# The collector writes the run's trace when its stream ends, at the end of the run.
for _ in $(seq 100); do [ -s "$work/data/network-1.row" ] && break; sleep 0.1; done
for ext in prv pcf row; do
    cmp "$work/host/network.$ext" "$work/data/network-1.$ext" || fail "the collected network-1.$ext differs"
done
say "collected trace identical to --trace"
# The view, asked from a container on the stack's network: run 1, finished, whole.
runs=$(docker run --rm --network "$network" --entrypoint bash vesper:latest -c \
    'exec 3<>/dev/tcp/view/8080; printf "GET /api/runs HTTP/1.0\r\nHost: view\r\n\r\n" >&3; cat <&3' \
    | sed '1,/^\r$/d')
shown=$(python3 -c 'import json, sys; r = json.load(sys.stdin); print([(x["run"], x["state"], x["dropped_records"]) for x in r["runs"]])' <<<"$runs") \
    || fail "the view's /api/runs is no JSON: $runs"
[ "$shown" = "[(1, 'finished', 0)]" ] || fail "the view shows $shown, not run 1 finished: $runs"
say "the view shows run 1 finished"
collector_log=$(docker logs "$("${compose[@]}" ps -q collector)" 2>&1)
! grep -q WARN <<<"$collector_log" || fail "the collector warned: $collector_log"
docker rm -f "$project-garbage" >/dev/null
# A field of a JSON report: json FILE 'expression on r'.
json() { python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"; }
[ "$(json "$work/data/stats-1.json" "[c['messages'] for c in r['simulation']['clients']]")" = "[240]" ] \
    || fail "run 1's report is not the replay's alone: $(cat "$work/data/stats-1.json")"

say "docker stop during a run"
docker run -d --name "$project-waiting" --network "$network" --entrypoint bash vesper:latest \
    -c 'exec 3<>/dev/tcp/vesper/10000; printf "SEND 0 0 1 7 1024 0x1 0x2 0 1 0 0\nSTOP 0\nEND\n" >&3; sleep 60' >/dev/null
server=$("${compose[@]}" ps -q vesper)
# Its log, read whole (grep -q on a pipe could end `docker logs` early: pipefail).
server_log() { docker logs "$server" 2>&1; }
# The replay's client was the first to connect; the waiting one is the second.
for _ in $(seq 100); do
    [ "$(server_log | grep -c "client [0-9]* connected")" -ge 2 ] && break
    sleep 0.1
done
log=$(server_log)
grep -q "run 2 starts" <<<"$log" || fail "run 2 did not start: $log"
[ "$(grep -c "client [0-9]* connected" <<<"$log")" -ge 2 ] || fail "the waiting client did not join run 2: $log"
docker stop "$server" >/dev/null
code=$(docker inspect "$server" --format '{{.State.ExitCode}}')
[ "$code" = 143 ] || fail "the server exited with $code after docker stop during a run, not 143"
[ "$(json "$work/data/stats-2.json" "[c['finished'] for c in r['simulation']['clients']]")" = "[False]" ] \
    || fail "no report of the interrupted run"
say "stopped mid-run: exit 143, report written"

say "stack down"
docker rm -f "$project-waiting" >/dev/null
"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1
left="$(docker ps -aq --filter "label=com.docker.compose.project=$project")"
left+="$(docker network ls -q --filter "label=com.docker.compose.project=$project")"
left+="$(docker volume ls -q --filter "label=com.docker.compose.project=$project")"
[ -z "$left" ] || fail "left behind: $left"
say "passed in $(($(date +%s) - started)) s"
