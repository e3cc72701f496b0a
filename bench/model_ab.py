#!/usr/bin/env python3
"""Compares release builds of vesper on the model benchmark, alternated in one session.

Usage: bench/model_ab.py [--preset NAME] [--args "MORE OPTIONS"] ROUNDS SWITCH LOADS DURATION_US BINARY...
  e.g. bench/model_ab.py 7 cioq 0.0584,0.292,0.5256 50000 /tmp/vesper-base target/release/vesper
       bench/model_ab.py --preset fat-tree 5 cioq 0.062,0.308,0.555 50000 A B

Runs `BINARY bench model [--preset NAME] --switch SWITCH --loads LOADS --duration-us DURATION_US [MORE OPTIONS] --json`
(MORE OPTIONS: say "--flit-bytes 64 --buffer-bytes 1024")
ROUNDS times per binary, alternating the order each round (the machine is noisy: compare
ratios from one session; on the workplace's VM whole runs now and then go about 0.6x for a
while, whatever the binary, so take five rounds or more and read the medians). Prints the median and the best packet-hops/s per load, the
ratio of medians to the first binary, and the events per packet-hop. Fails if the
binaries disagree on what they simulated (packets, accepted load, mean latency).
"""
import json
import os
import statistics
import subprocess
import sys

args = sys.argv[1:]
preset, extra = [], []
while args[:1] in (["--preset"], ["--args"]):
    if args[0] == "--preset":
        preset = ["--preset", args[1]]
    else:
        extra += args[1].split()
    args = args[2:]
rounds, switch, loads, duration = int(args[0]), args[1], args[2], args[3]
binaries = args[4:]
rates = {b: [] for b in binaries}
model_rates = {}  # the same without the traffic generator (builds that report it)
results, events = {}, {}
env = dict(os.environ, VESPER_LOG="warn")
for r in range(rounds):
    for b in binaries if r % 2 == 0 else binaries[::-1]:
        command = [b, "bench", "model", *preset, "--switch", switch, "--loads", loads, "--duration-us", duration, *extra, "--json"]
        points = json.loads(subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout)
        rates[b].append([p["packet_hops_per_second"] for p in points])
        if all("packet_hops_per_model_second" in p for p in points):
            model_rates.setdefault(b, []).append([p["packet_hops_per_model_second"] for p in points])
        events.setdefault(b, [p["events"] / p["packet_hops"] for p in points])
        simulated = [(p["packets"], p["accepted_load"], p["mean_latency_ns"]) for p in points]
        assert results.setdefault(b, simulated) == simulated, f"{b} is not deterministic"
same = len({json.dumps(v) for v in results.values()}) == 1
print(f"{' '.join(preset[1:]) or 'crossbar'}, {switch}, loads {loads}, {duration} µs, {' '.join(extra) + ', ' if extra else ''}{rounds} rounds; same simulated results: {same}")
first = None
for b in binaries:
    medians = [statistics.median(c) for c in zip(*rates[b])]
    best = [max(c) for c in zip(*rates[b])]
    first = first or medians
    print(
        f"  {b}: median " + " / ".join(f"{m / 1e6:.2f} M" for m in medians)
        + ";  best " + " / ".join(f"{m / 1e6:.2f} M" for m in best)
        + ";  ratio " + " / ".join(f"{m / f:.2f}" for m, f in zip(medians, first))
        + ";  events per packet-hop " + " / ".join(f"{e:.2f}" for e in events[b])
    )
    if b in model_rates:
        model_medians = [statistics.median(c) for c in zip(*model_rates[b])]
        print("      model only (no traffic generator): median " + " / ".join(f"{m / 1e6:.2f} M" for m in model_medians))
sys.exit(0 if same else 1)
