#!/usr/bin/env bash
# A replay with a Dimemas configuration, and the first pass over a streamed trace, with
# a build from before against this one (alternated runs; the same predictions).
#
# Usage: BEFORE=OLD_TARGET_RELEASE_DIR bash bench/dimemas_config.sh [ROUNDS]
#   OLD_TARGET_RELEASE_DIR holds the `vesper` to compare with (target/release of another
#   work tree). Prints each run's wall time and peak memory, and the predictions.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
old=${BEFORE:?give BEFORE=the other build\'s target/release}/vesper
new=target/release/vesper
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A 256-task all-to-all of 20,000-byte messages on 64 nodes of 4 tasks, 4 buses, one
# link each way per node and per task, one intra-node bus: every resource queues.
"$new" run --workload all-to-all --tasks 256 --size 20000 --save-trace "$work/a2a.dim" \
    --network ideal --bandwidth 1000 --no-server >/dev/null 2>&1
cat >"$work/a2a.cfg" <<'CFG'
#DIMEMAS_CONFIGURATION
"wide area network information" {"", 1, 0, 4, 0.0, 0.0, 1};;
"environment information" {"", 0, "", 64, 1000.0, 4, 1};;
"multi node information" {0, 64, "", 4, 1.0, 1e-07, 5000.0, 2, 1, 1, 1e-06, 1, 1, 0.0};;
"predefined mapping information" {"4 TASKS_PER_NODE"};;
CFG
# An 87 MB trace read as the replay goes (800,000 messages over 64 tasks).
"$new" run --workload random --tasks 64 --size 1000 --messages 800000 --save-trace "$work/big.dim" \
    --network ideal --bandwidth 250 --no-server >/dev/null 2>&1
run() {
    local bin=$1; shift
    /usr/bin/time -f "%e s %M KB" "$bin" run "$@" --network ideal --no-server --json 2>"$work/time" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["predicted_ns"], end=" ")'
    tail -1 "$work/time"
}
for case in "a2a.dim --config $work/a2a.cfg" "big.dim --bandwidth 250"; do
    echo "== $case"
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086
        echo "before $(run "$old" "$work"/$case)"
        # shellcheck disable=SC2086
        echo "now    $(run "$new" "$work"/$case)"
    done
done
