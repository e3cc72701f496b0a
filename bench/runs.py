#!/usr/bin/env python3
"""How a long-lived `vesper serve --keep-serving` costs as it serves run after run.

Starts the server, serves N runs of the README's transcript client (each run one
client, connect to close), then times one client with a large message (700 MB by
default: 170,000 packets through the default crossbar), and reads the server's resident
memory. Before runs were independent, every client ever served was kept and looked at
on every step: the large message took longer the more clients had come before it.

    bench/runs.py --vesper target/release/vesper --before 0,1000,4000
"""

import argparse
import socket
import subprocess
import time

TRANSCRIPT = (
    b"SEND 6500 0 1 7 1024 0x55a873d62cc0 0x55a873d62c60 0 1 0 0\nSTOP 6500\nEND\n"
    b"STOP 1000000000\nEND\nFINISH\n"
)
UNTIL_NEXT_COMPLETION = b"252000000000000000"


def connect(port):
    for _ in range(500):
        try:
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        except ConnectionRefusedError:
            time.sleep(0.01)
    raise SystemExit(f"no server on port {port}")


def script(port, data):
    s = connect(port)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    s.close()


def large_message(port, size):
    """Seconds from sending one message of `size` bytes to its completion."""
    s = connect(port)
    start = time.perf_counter()
    s.sendall(
        b"SEND 6500 0 1 7 %d 0x1 0x2 0 1 0 0\nSTOP %s\nEND\n" % (size, UNTIL_NEXT_COMPLETION)
    )
    reply = b""
    while b"END\n" not in reply:
        chunk = s.recv(4096)
        if not chunk:
            raise SystemExit(f"the server closed the connection: {reply!r}")
        reply += chunk
    elapsed = time.perf_counter() - start
    if b"COMPLETED SEND" not in reply:
        raise SystemExit(f"no completion: {reply!r}")
    s.sendall(b"FINISH\n")
    s.close()
    return elapsed


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def measure(vesper, before, size, port):
    server = subprocess.Popen(
        [vesper, "serve", "--listen", f"127.0.0.1:{port}", "--keep-serving", "--spin-us", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        start = time.perf_counter()
        for _ in range(before):
            script(port, TRANSCRIPT)
        per_run_ms = (time.perf_counter() - start) / before * 1e3 if before else 0.0
        seconds = large_message(port, size)
        return per_run_ms, seconds, rss_kib(server.pid)
    finally:
        server.terminate()
        server.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vesper", default="target/release/vesper")
    p.add_argument("--before", default="0,1000,4000", help="runs served before the large message")
    p.add_argument("--size", type=int, default=700_000_000, help="the large message [bytes]")
    p.add_argument("--port", type=int, default=10931)
    args = p.parse_args()
    print("| runs before | transcript run [ms] | large message [s] | server RSS [MiB] |")
    print("|---|---|---|---|")
    for before in [int(n) for n in args.before.split(",")]:
        per_run, seconds, rss = measure(args.vesper, before, args.size, args.port)
        print(f"| {before:,} | {per_run:.2f} | {seconds:.3f} | {rss / 1024:.1f} |", flush=True)


if __name__ == "__main__":
    main()
