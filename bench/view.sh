#!/usr/bin/env bash
# vesper view on a 4,096-host network (the 16-ary 3-tree, output-queued switches): how
# fast the view checks and folds a trace stream sent at full speed, its memory, and how
# long the page takes to draw a window of every link in headless Chromium.
#
#   1. `vesper run` replays an all-to-all of TASKS tasks (4 KiB messages) and streams its
#      trace to a listener that keeps the bytes (and writes --trace files beside them);
#   2. those bytes go to `vesper view --listen-trace` as fast as a socket takes them:
#      the time until /api/runs says the run is finished, the records a second, the
#      view's peak resident memory;
#   3. `vesper view FILE.prv` and Chromium (`--dump-dom`; a file's page opens no event
#      stream): the page's own draw time of the whole network (its canvas's data-draw-ms)
#      for the whole run and for a window of 16 bins.
#
# Usage: bench/view.sh VESPER [TASKS]   (TASKS defaults to 256)
set -euo pipefail
vesper=$(realpath "${1:?usage: $0 VESPER [TASKS]}")
tasks=${2:-256}
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
sed -e '/buffer_bytes/d' -e 's/"wormhole"/"output-queued"/' bench/16-ary-3-tree.toml >"$dir/net.toml"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# 1. The stream, captured.
port=$(free_port)
python3 - "$port" "$dir/stream.txt" <<'PY' &
import socket, sys
listener = socket.create_server(("127.0.0.1", int(sys.argv[1])))
connection, _ = listener.accept()
with open(sys.argv[2], "wb") as out:
    while True:
        data = connection.recv(1 << 20)
        if not data:
            break
        out.write(data)
PY
capture=$!
sleep 0.5
start=$(date +%s.%N)
"$vesper" run --network "$dir/net.toml" --tasks "$tasks" --size 4096 \
    --trace-stream "127.0.0.1:$port" --trace "$dir/network.prv" >/dev/null
wait "$capture"
records=$(grep -c '^[123]:' "$dir/stream.txt")
printf 'run: %d tasks, %.1f s, %d records, %.1f MB of stream\n' "$tasks" \
    "$(echo "$(date +%s.%N) - $start" | bc)" "$records" "$(echo "$(stat -c %s "$dir/stream.txt") / 1000000" | bc -l)"

# 2. The stream at full speed into the view.
streams=$(free_port)
http=$(free_port)
"$vesper" view --listen-trace "127.0.0.1:$streams" --http "127.0.0.1:$http" 2>/dev/null &
view=$!
for _ in $(seq 100); do curl -s "127.0.0.1:$http/api/runs" >/dev/null && break; sleep 0.1; done
python3 - "$streams" "$http" "$dir/stream.txt" "$records" <<'PY'
import json, socket, sys, time, urllib.request
streams, http, path, records = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
data = open(path, "rb").read()
begin = time.monotonic()
s = socket.create_connection(("127.0.0.1", streams))
s.sendall(data)
sent = time.monotonic()
s.close()
while True:
    runs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{http}/api/runs"))["runs"]
    if runs and runs[-1]["state"] != "live":
        break
    time.sleep(0.005)
done = time.monotonic()
run = runs[-1]
assert run["state"] == "finished", run
print(f"view: {run['records']} records, {run['links']} links; sent in {sent - begin:.2f} s, "
      f"finished {done - begin:.2f} s after the first byte: {records / (done - begin) / 1e6:.2f} M records/s "
      f"({len(data) / (done - begin) / 1e6:.0f} MB/s); dropped {run['dropped_records']}")
PY
echo "view: peak $(grep VmHWM /proc/$view/status | tr -s ' ' | cut -d' ' -f2-)"
kill "$view"

# 3. The page's draw time.
"$vesper" view "$dir/network.prv" --http "127.0.0.1:$http" 2>/dev/null &
view=$!
for _ in $(seq 100); do curl -s "127.0.0.1:$http/api/trace" | grep -q '"loading":false' && break; sleep 0.1; done
python3 - "$http" "$dir" <<'PY'
# Chromium over the DevTools protocol (a minimal WebSocket client): the page's draw
# time is real time here, where --dump-dom's virtual time stands still.
import base64, json, os, socket, struct, subprocess, sys, time, urllib.request
http, scratch = sys.argv[1], sys.argv[2]
profile = os.path.join(scratch, "profile")
chromium = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(600):
        try:
            port = int(open(os.path.join(profile, "DevToolsActivePort")).readline())
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
            page = next(t for t in targets if t["type"] == "page")
            break
        except (OSError, ValueError, StopIteration):
            time.sleep(0.1)
    path = page["webSocketDebuggerUrl"].split(str(port), 1)[1]
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dmVzcGVyIHZpZXcgYmVuY2g=\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        head += s.recv(1)
    def exact(n):
        data = b""
        while len(data) < n:
            data += s.recv(n - len(data))
        return data
    ids = iter(range(1, 1 << 30))
    def call(method, **params):
        i = next(ids)
        payload = json.dumps({"id": i, "method": method, "params": params}).encode()
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                  if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        s.sendall(header + b"\0\0\0\0" + payload)
        while True:
            message = b""
            while True:
                b0, b1 = exact(2)
                n = b1 & 0x7F
                n = struct.unpack(">H", exact(2))[0] if n == 126 else struct.unpack(">Q", exact(8))[0] if n == 127 else n
                data = exact(n)
                if b0 & 0x0F >= 8:
                    continue
                message += data
                if b0 & 0x80:
                    break
            m = json.loads(message)
            if m.get("id") == i:
                return m.get("result")
    call("Emulation.setDeviceMetricsOverride", width=1400, height=1200, deviceScaleFactor=1, mobile=False)
    for width in ["all", "16"]:
        call("Page.navigate", url=f"http://127.0.0.1:{http}/?width={width}")
        for _ in range(600):
            drawn = call("Runtime.evaluate", expression="document.getElementById('network').dataset.linksDrawn || ''",
                         returnByValue=True)["result"].get("value")
            if drawn:
                break
            time.sleep(0.1)
        # Redraws of the same window, as a slider move or a live tick redraws.
        times = call("Runtime.evaluate", returnByValue=True, expression="""(() => { const t = [];
            for (let k = 0; k < 20; k++) { drawNetwork(); t.push(Number(document.getElementById('network').dataset.drawMs)); }
            t.sort((a, b) => a - b); return t; })()""")["result"]["value"]
        print(f"page: window {width}, {drawn} links drawn; draw {times[len(times) // 2]:.1f} ms median, "
              f"{times[-1]:.1f} ms slowest of 20: {1000 / times[len(times) // 2]:.0f} frames/s")
finally:
    chromium.kill()
PY
echo "view of the file: peak $(grep VmHWM /proc/$view/status | tr -s ' ' | cut -d' ' -f2-)"
kill "$view"
