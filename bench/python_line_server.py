#!/usr/bin/env python3
"""The baseline for `vesper bench sync --server`: a simple Python line server.

It reads lines with a thread per connection and answers every `END` with
`END\n`, which is the least a co-simulation server can do per round trip.
Usage: python3 bench/python_line_server.py PORT
"""
import socket
import sys
import threading


def serve(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with conn, conn.makefile("rb") as lines:
        for line in lines:
            if line.startswith(b"END"):
                conn.sendall(b"END\n")
            elif line.startswith(b"FINISH"):
                return


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 10001
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
