#!/usr/bin/env bash
# Memory and CPU of an incast of big messages: N SENDs of 2,147,483,647 bytes, all at
# time 0, from hosts 1..N to host 0, on each switch kind; the server's peak resident
# memory and CPU seconds (GNU time), and a digest of the completions (the same on every
# build that models the same network).
#
# Usage: bench/incast_memory.sh VESPER [N]   (N defaults to 60, the issue's reproducer)
set -euo pipefail
vesper=${1:?usage: $0 VESPER [N]}
n=${2:-60}
port=17190
for network in "--switch output-queued" "--switch cioq" "--preset fat-tree"; do
  port=$((port + 1))
  log=$(mktemp)
  # shellcheck disable=SC2086
  /usr/bin/time -f "peak %M KiB, cpu %U s user" "$vesper" serve --listen 127.0.0.1:$port $network >/dev/null 2>"$log" &
  server=$!
  for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
  digest=$(python3 - "$port" "$n" <<'PY'
import hashlib, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"".join(b"SEND 0 %d 0 7 2147483647 0x%x 0x%x %d 0 0 0\n" % (i, i, i, i) for i in range(1, n + 1)) + b"STOP 2.52e17\nEND\n")
done, buf, lines = 0, b"", []
while done < n:
    d = s.recv(65536)
    if not d:
        sys.exit("the server closed the connection after %d completions" % done)
    buf += d
    while b"END\n" in buf:
        batch, buf = buf.split(b"END\n", 1)
        got = [l for l in batch.decode().splitlines() if l.startswith("COMPLETED")]
        done += len(got)
        lines += got
        if done < n:
            s.sendall(b"STOP 2.52e17\nEND\n")
s.sendall(b"FINISH\n")
print(hashlib.md5("\n".join(lines).encode()).hexdigest()[:12])
PY
)
  wait "$server" || true
  echo "$network: $n x 2 GiB to host 0: $(tail -n 1 "$log"), completions $digest"
  rm -f "$log"
done
