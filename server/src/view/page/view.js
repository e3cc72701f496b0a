// vesper view: draws the network as its topology is recognised (fat trees and maps by
// levels, hosts at the bottom; tori, meshes and hypercubes as grids, a slice at a
// time; dragonflies as groups on a circle) and colours every link by its utilisation
// in the window the slider picks. Asks
// the server for /api/trace (the devices, their places, and the links) and /api/window
// (each link's bytes in a window); plain JavaScript, nothing fetched from elsewhere.
"use strict";

const ROW_PX = 110;
const MARGIN_PX = 24;
const LABEL_PX = 64;
const view = {
  trace: null,      // /api/trace
  window: null,     // /api/window
  places: [],       // per device: {x, y} in canvas pixels
  rows: [],         // per row: [label, y]
  start: 0,         // the window's first bin
  width: 16,        // its bins ("all": the whole run)
  inFlight: false,  // a window request is out
  again: false,     // the slider moved meanwhile
  marked: null,     // the link marked from the table, or null
  live: null,       // with --listen-trace: the runs (see live functions below), else null
  run: null,        // the run shown (its number), null: the newest
  follow: true,     // the window tracks the live edge
};
const $ = (id) => document.getElementById(id);

async function getJson(url) {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`${url}: ${answer.status} ${await answer.text()}`);
  return answer.json();
}

function showProblem(text) {
  const box = $("problem");
  box.textContent = text || "";
  box.style.display = text ? "block" : "none";
}

function bytesText(b) {
  for (const [unit, size] of [["GB", 1e9], ["MB", 1e6], ["kB", 1e3]]) {
    if (b >= size) return `${(b / size).toFixed(b >= 10 * size ? 1 : 2)} ${unit}`;
  }
  return `${b} B`;
}

function timeText(ns) {
  for (const [unit, size] of [["s", 1e9], ["ms", 1e6], ["µs", 1e3]]) {
    if (ns >= size) return `${(ns / size).toFixed(ns >= 100 * size ? 0 : 2)} ${unit}`;
  }
  return `${ns} ns`;
}

// Utilisation 0..1 (and above) to a colour: light yellow, orange, dark red; grey
// for a link that carried nothing.
function colour(u) {
  if (!(u > 0)) return "rgb(215,215,215)";
  const stops = [[0, [255, 237, 160]], [0.5, [253, 141, 60]], [0.8, [227, 26, 28]], [1, [128, 0, 38]]];
  u = Math.min(u, 1);
  for (let i = 1; i < stops.length; i++) {
    const [u1, c1] = stops[i];
    const [u0, c0] = stops[i - 1];
    if (u <= u1) {
      const f = (u - u0) / (u1 - u0);
      return `rgb(${c0.map((c, k) => Math.round(c + f * (c1[k] - c))).join(",")})`;
    }
  }
  return "rgb(128,0,38)";
}

async function loadTrace() {
  try {
    view.trace = await getJson(`/api/trace?${runParam()}`);
  } catch (e) {
    showProblem(`cannot reach vesper view: ${e.message}`);
    setTimeout(loadTrace, 2000);
    return;
  }
  const t = view.trace;
  $("file").textContent = t.file;
  $("status").textContent = (t.loading ? `reading… ${t.lines} lines; ` : "") +
    `${t.links.length} links, ${t.records.link_communications} link records, ` +
    `${timeText(t.end_ns)} in ${t.bins} bins of ${timeText(t.bin_ns)}`;
  showProblem([t.problem, t.topology_problem].filter(Boolean).join("\n"));
  const slider = $("slider");
  slider.max = Math.max(0, t.bins - 1);
  view.start = Math.min(view.start, Number(slider.max));
  drawLegend();
  place();
  requestWindow();
  if (t.loading && !view.live) setTimeout(loadTrace, 500);
  showRuns();
}

// Device positions, from the server's x and y (0 to 1, y down). Levels: a row per
// level, hosts at the bottom, devices without a level on a row of their own at the
// top. A grid (torus, mesh, hypercube): the slice chosen; devices of other slices are
// not drawn (their places are null). Groups (a dragonfly): a square picture, the
// groups on a circle.
function place() {
  const t = view.trace;
  const layout = t.layout || { kind: "levels", rows: [], slices: [], aspect: null };
  const canvas = $("network");
  canvas.width = canvas.clientWidth * devicePixelRatio;
  let cssHeight, toX, toY;
  if (layout.kind === "grid" || layout.kind === "groups") {
    const w = canvas.clientWidth - 2 * MARGIN_PX;
    cssHeight = Math.round(Math.max(160, Math.min(720, w * (layout.aspect || 1) + 2 * MARGIN_PX)));
    const h = cssHeight - 2 * MARGIN_PX;
    // Groups: a square in the middle, so that the circle of groups stays round.
    const side = layout.kind === "groups" ? Math.min(w, h) : w;
    const left = MARGIN_PX + (w - side) / 2;
    toX = (x) => left + x * side;
    toY = (y) => MARGIN_PX + y * h;
  } else {
    const rows = Math.max(1, layout.rows.length);
    cssHeight = 2 * MARGIN_PX + (rows - 1) * ROW_PX + 20;
    const w = canvas.clientWidth - 2 * MARGIN_PX - LABEL_PX;
    toX = (x) => MARGIN_PX + LABEL_PX + x * w;
    toY = (y) => MARGIN_PX + 10 + y * (rows - 1) * ROW_PX;
  }
  canvas.style.height = `${cssHeight}px`;
  canvas.height = cssHeight * devicePixelRatio;
  // The slice shown, and its selector (only when there is more than one).
  const slices = layout.slices || [];
  view.slice = Math.min(view.slice || 0, Math.max(0, slices.length - 1));
  const select = $("slice");
  if (select) {
    select.parentElement.hidden = slices.length < 2;
    if (select.options.length !== slices.length) {
      select.replaceChildren(...slices.map((name, i) => new Option(name, i)));
      select.onchange = () => {
        view.slice = Number(select.value);
        place();
        if (view.window) draw();
      };
    }
    select.value = view.slice;
  }
  view.places = t.devices.map((d) => ((d.slice || 0) === view.slice ? { x: toX(d.x), y: toY(d.y) } : null));
  view.rows = layout.rows.map((r) => [r.label, toY(r.y)]);
}

function windowRange() {
  const t = view.trace;
  if (following() && view.window) return [view.window.from_ns, view.window.to_ns];
  if (view.width === "all") return [0, t.end_ns];
  return [view.start * t.bin_ns, (view.start + view.width) * t.bin_ns];
}

async function requestWindow() {
  if (!view.trace) return;
  if (view.inFlight) {
    view.again = true;
    return;
  }
  view.inFlight = true;
  const [from, to] = windowRange();
  try {
    view.window = await getJson(following() ? `/api/window?last=${view.width}&${runParam()}`
      : `/api/window?from_ns=${from}&to_ns=${to}&${runParam()}`);
    if (following()) followEdge();
    if (view.window.bytes.length > view.trace.links.length && !view.trace.loading) loadTrace();
    draw();
  } catch (e) {
    showProblem(e.message);
  }
  view.inFlight = false;
  if (view.again) {
    view.again = false;
    requestWindow();
  }
}

// A link's line on the canvas, or null when an end is not drawn (another slice). A
// torus' wraparound link is a stub leaving its sender away from the far end.
function linkEnds(link, i) {
  const p = view.places[link.from_device];
  let q = view.places[link.to_device];
  if (!p || !q) return null;
  let dx = q.x - p.x;
  let dy = q.y - p.y;
  const len = Math.hypot(dx, dy) || 1;
  if (link.wrap) {
    q = { x: p.x - (dx / len) * 18, y: p.y - (dy / len) * 18 };
    [dx, dy] = [q.x - p.x, q.y - p.y];
  }
  // The two directions of a cable side by side.
  const side = link.from_device < link.to_device ? 1.5 : -1.5;
  const ox = (-dy / (Math.hypot(dx, dy) || 1)) * side;
  const oy = (dx / (Math.hypot(dx, dy) || 1)) * side;
  return [p.x + ox, p.y + oy, q.x + ox, q.y + oy];
}

// What link i can carry in the window: at its own rate (the trace's topology), or
// at --link-bandwidth.
function linkCapacity(i) {
  const t = view.trace;
  const link = t.links[i];
  const mbs = (link && link.mbs) || t.link_bandwidth_mbs;
  return (view.window.capacity_bytes * mbs) / t.link_bandwidth_mbs;
}

// The window's figures: the picture, the histogram, the summary and the table.
function draw() {
  const w = view.window;
  drawNetwork();
  drawActivity();
  const backlog = w.highest_backlog;
  $("summary").textContent = `window ${timeText(w.from_ns)} – ${timeText(w.to_ns)}` +
    (w.top.length ? "" : ": no traffic") +
    (backlog ? `; highest backlog ${backlog.port}, level ${backlog.max_level}` +
      (backlog.max_bytes !== null ? ` (≤ ${bytesText(backlog.max_bytes)})` : "") : "");
  const rows = w.top.map((l, rank) => {
    const row = document.createElement("tr");
    for (const [text, numeric] of [[rank + 1, true], [`${l.from} → ${l.to}`, false],
      [bytesText(l.bytes), true], [`${(100 * l.utilisation).toFixed(1)} %`, true]]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      if (numeric) cell.className = "n";
      row.appendChild(cell);
    }
    row.addEventListener("mouseenter", () => { view.marked = l.link; drawNetwork(); });
    row.addEventListener("mouseleave", () => { view.marked = null; drawNetwork(); });
    return row;
  });
  $("top").tBodies[0].replaceChildren(...rows);
  const busiest = w.top[0];
  const top = $("top").dataset;
  top.busiestFrom = busiest ? busiest.from : "";
  top.busiestTo = busiest ? busiest.to : "";
  top.busiestBytes = busiest ? busiest.bytes : 0;
}

function drawNetwork() {
  const began = performance.now();
  const t = view.trace;
  const w = view.window;
  const canvas = $("network");
  const g = canvas.getContext("2d");
  g.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
  g.clearRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = "#78909c";
  g.textBaseline = "middle";
  for (const [label, y] of view.rows) g.fillText(label, 8, y);
  g.lineWidth = t.links.length > 4000 ? 1 : 2;
  // Idle links first, the busiest last (on top).
  const order = t.links.map((_, i) => i).sort((a, b) => (w.bytes[a] || 0) - (w.bytes[b] || 0));
  let drawn = 0;
  for (const i of order) {
    const ends = linkEnds(t.links[i], i);
    if (!ends) continue;
    drawn += 1;
    const [x0, y0, x1, y1] = ends;
    g.strokeStyle = colour((w.bytes[i] || 0) / linkCapacity(i));
    g.beginPath();
    g.moveTo(x0, y0);
    g.lineTo(x1, y1);
    g.stroke();
  }
  t.devices.forEach((d, i) => {
    const p = view.places[i];
    if (!p) return;
    g.fillStyle = d.host ? "#546e7a" : "#263238";
    if (d.host) {
      g.beginPath();
      g.arc(p.x, p.y, 3, 0, 2 * Math.PI);
      g.fill();
    } else {
      g.fillRect(p.x - 4, p.y - 4, 8, 8);
    }
  });
  const marked = view.marked !== null && view.marked < t.links.length ? linkEnds(t.links[view.marked], view.marked) : null;
  if (marked) {
    const [x0, y0, x1, y1] = marked;
    g.strokeStyle = "#1565c0";
    g.lineWidth = 5;
    g.beginPath();
    g.moveTo(x0, y0);
    g.lineTo(x1, y1);
    g.stroke();
  }
  // What the picture shows, for tests and tools that read the page: the links drawn
  // (of this slice), the run's state, and how long the drawing took.
  canvas.dataset.linksDrawn = drawn;
  canvas.dataset.links = t.links.length;
  canvas.dataset.state = shownState();
  canvas.dataset.drawMs = (performance.now() - began).toFixed(2);
}

// `live`, `finished` or `problem` for the run shown (`loading` while a file is read).
function shownState() {
  const t = view.trace;
  const run = view.live ? shownRun() : null;
  if (run) return run.state;
  return t.loading ? "loading" : t.problem ? "problem" : "finished";
}

function drawActivity() {
  const t = view.trace;
  const canvas = $("activity");
  canvas.width = canvas.clientWidth * devicePixelRatio;
  canvas.height = canvas.clientHeight * devicePixelRatio;
  const g = canvas.getContext("2d");
  g.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
  const [cw, ch] = [canvas.clientWidth, canvas.clientHeight];
  const n = Math.max(1, t.bins);
  const most = t.activity.reduce((a, b) => Math.max(a, b), 1);
  const [from, to] = windowRange();
  g.fillStyle = "#e3f2fd";
  g.fillRect((from / t.bin_ns / n) * cw, 0, ((to - from) / t.bin_ns / n) * cw, ch);
  g.fillStyle = "#455a64";
  t.activity.forEach((bytes, i) => {
    const h = (bytes / most) * (ch - 2);
    g.fillRect((i / n) * cw, ch - h, Math.max(1, cw / n - 0.5), h);
  });
}

function drawLegend() {
  const canvas = $("scale");
  const g = canvas.getContext("2d");
  for (let x = 0; x < canvas.width; x++) {
    g.fillStyle = colour(Math.max(1e-9, x / (canvas.width - 1)));
    g.fillRect(x, 0, 1, canvas.height);
  }
  const rate = view.trace.link_bandwidth_mbs;
  const topology = view.trace.topology;
  $("scale-labels").textContent = (topology
    ? `0 to 100 % of each link's rate (the trace's topology: ${topology})`
    : `0 to 100 % of ${rate} MB/s a link (--link-bandwidth)`) + "; grey: nothing in the window";
}

// The link or device under the mouse, for the tooltip.
function hit(x, y) {
  const t = view.trace;
  for (let i = 0; i < t.devices.length; i++) {
    const p = view.places[i];
    if (p && Math.hypot(p.x - x, p.y - y) < 5) {
      const d = t.devices[i];
      return `${d.name}${d.level === null ? "" : `, level ${d.level}`}`;
    }
  }
  let best = null;
  let bestDistance = 4;
  t.links.forEach((link, i) => {
    const ends = linkEnds(link, i);
    if (!ends) return;
    const [x0, y0, x1, y1] = ends;
    const [dx, dy] = [x1 - x0, y1 - y0];
    const f = Math.max(0, Math.min(1, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy || 1)));
    const distance = Math.hypot(x0 + f * dx - x, y0 + f * dy - y);
    if (distance < bestDistance) [best, bestDistance] = [i, distance];
  });
  if (best === null) return null;
  const link = t.links[best];
  const bytes = view.window.bytes[best] || 0;
  return `${link.from} → ${link.to}\nwindow: ${bytesText(bytes)}, ` +
    `${(100 * bytes / linkCapacity(best)).toFixed(1)} % of ${link.mbs} MB/s\n` +
    `whole run: ${bytesText(link.bytes)}, ${link.messages} messages`;
}

$("network").addEventListener("mousemove", (e) => {
  const tip = $("tip");
  const r = e.target.getBoundingClientRect();
  const text = view.trace && view.window ? hit(e.clientX - r.left, e.clientY - r.top) : null;
  tip.style.display = text ? "block" : "none";
  if (text) {
    tip.textContent = text;
    tip.style.left = `${e.clientX + 12}px`;
    tip.style.top = `${e.clientY + 12}px`;
  }
});
$("network").addEventListener("mouseleave", () => { $("tip").style.display = "none"; });
$("slider").addEventListener("input", (e) => {
  view.start = Number(e.target.value);
  requestWindow();
});
$("width").addEventListener("change", (e) => {
  view.width = e.target.value === "all" ? "all" : Number(e.target.value);
  $("slider").disabled = view.width === "all" || following();
  requestWindow();
});
window.addEventListener("resize", () => {
  if (view.trace) {
    place();
    if (view.window) draw();
  }
});
boot();

// Live runs (vesper view --listen-trace): a run selector, follow mode and the server's
// events. The server sends a tick when a run starts or ends or its records reach
// further (at most ten a second); each tick costs one /api/runs and one /api/window,
// and /api/trace only when the run's links, names or state changed.

// `run=N` for the run shown, or nothing for the newest.
function runParam() {
  return view.run === null ? "" : `run=${view.run}`;
}

// The window tracks the live edge: follow is on, the run is live, and the window is
// some bins (not the whole run).
function following() {
  return view.live !== null && view.follow && view.width !== "all";
}

// After a followed window came: the slider at the live edge.
function followEdge() {
  const w = view.window;
  const slider = $("slider");
  slider.max = Math.max(0, w.trace_bins - 1);
  view.start = Math.round(w.from_ns / w.bin_ns);
  slider.value = view.start;
  if (view.trace && w.trace_bins !== view.trace.bins) {
    view.trace.bins = w.trace_bins;
    view.trace.bin_ns = w.bin_ns;
    view.trace.end_ns = w.end_ns;
  }
}

// The page's address may set the window (`?width=all`, or 1, 4, 16, 64 bins), the run
// (`?run=N`) and follow mode (`?follow=0`).
function fromAddress() {
  const q = new URLSearchParams(location.search);
  const width = q.get("width");
  if (width !== null && [...$("width").options].some((o) => o.value === width)) {
    view.width = width === "all" ? "all" : Number(width);
    $("width").value = width;
  }
  if (q.get("run") !== null && Number.isInteger(Number(q.get("run")))) view.run = Number(q.get("run"));
  if (q.get("follow") === "0") {
    view.follow = false;
    $("follow").checked = false;
  }
}

async function boot() {
  fromAddress();
  let runs;
  try {
    runs = await getJson("/api/runs");
  } catch (e) {
    showProblem(`cannot reach vesper view: ${e.message}`);
    setTimeout(boot, 2000);
    return;
  }
  if (runs.listening === null) {
    loadTrace();
    return;
  }
  view.live = { runs, shown: null, inFlight: false, again: false, traced: 0 };
  $("live").style.display = "flex";
  $("run").addEventListener("change", (e) => {
    view.run = e.target.value === "newest" ? null : Number(e.target.value);
    view.live.shown = null;
    view.window = null;
    loadTrace();
  });
  $("follow").addEventListener("change", (e) => {
    view.follow = e.target.checked;
    $("slider").disabled = view.follow || view.width === "all";
    requestWindow();
  });
  $("slider").disabled = view.follow;
  const events = new EventSource("/api/events");
  events.addEventListener("tick", onTick);
  events.onerror = () => showRuns("the connection to vesper view broke; retrying…");
  onTick();
}

// A tick: what moved.
async function onTick() {
  const live = view.live;
  if (live.inFlight) {
    live.again = true;
    return;
  }
  live.inFlight = true;
  try {
    live.runs = await getJson("/api/runs");
    fillRuns();
    const run = shownRun();
    const t = view.trace;
    const changed = run && (!t || !live.shown || live.shown.links !== run.links || live.shown.named !== run.named ||
      live.shown.state !== run.state || live.shown.run !== run.run ||
      (run.state === "live" && Date.now() - live.traced > 1000));
    if (changed) {
      live.shown = run;
      live.traced = Date.now();
      await loadTrace();
    } else if (run) {
      live.shown = run;
      requestWindow();
    }
    showRuns();
  } catch (e) {
    showRuns(e.message);
  }
  live.inFlight = false;
  if (live.again) {
    live.again = false;
    onTick();
  }
}

// The run shown, from /api/runs.
function shownRun() {
  const runs = view.live.runs.runs;
  if (view.run === null) return runs[runs.length - 1] || null;
  return runs.find((r) => r.run === view.run) || null;
}

// The run selector: "newest" (follows new runs), then every run kept.
function fillRuns() {
  const select = $("run");
  const want = ["newest", ...view.live.runs.runs.map((r) => String(r.run))];
  const have = [...select.options].map((o) => o.value);
  if (want.join() !== have.join()) {
    const options = want.map((v) => {
      const o = document.createElement("option");
      o.value = v;
      o.textContent = v === "newest" ? "newest" : `run ${v}`;
      return o;
    });
    select.replaceChildren(...options);
    select.value = view.run === null ? "newest" : String(view.run);
  }
  for (const o of select.options) {
    const r = view.live.runs.runs.find((x) => String(x.run) === o.value);
    if (r) o.textContent = `run ${r.run} (${r.state})`;
  }
}

// The runs line: the run shown, the runs kept and dropped, the lag and drops.
function showRuns(trouble) {
  if (!view.live) return;
  const all = view.live.runs;
  const run = shownRun();
  let text;
  if (!run) {
    text = `waiting for a trace stream on ${all.listening} (vesper serve|run --trace-stream ${all.listening})`;
  } else {
    text = `run ${run.run}: ${run.state}, ${run.records.toLocaleString()} records` +
      (run.state === "live" ? "; the page is at most one batch (4,096 records) behind the stream" : "") +
      (run.dropped_records ? `; the server dropped ${run.dropped_records.toLocaleString()} records (its stream's queue was full)` : "") +
      (run.named ? "" : "; ports named by number until the stream's end brings their names");
  }
  text += ` · ${all.runs.length} runs kept of at most ${all.keep_runs}` +
    (all.dropped_runs ? `, ${all.dropped_runs} older dropped` : "");
  if (trouble) text += ` · ${trouble}`;
  $("runs").textContent = text;
}
