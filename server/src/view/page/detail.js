// vesper view's detail panels, beside view.js: a link's messages (/api/link), a port's
// backlog and events (/api/port), and the application's task states (/api/app) under
// the histogram, on the slider's time axis. Reads view.js's `view` (the trace, the
// window, the devices' places) and never changes it; follows its window by watching
// `view.window`; asks with view.js's `getJson` and writes figures with its `bytesText`
// and `timeText`. Plain JavaScript, nothing fetched from elsewhere.
"use strict";

(() => {
  const MARK_COLOURS = { stop: "#d32f2f", go: "#388e3c", hol: "#7b1fa2", wait: "#ef6c00" };
  const MARK_NAMES = { stop: "STOP", go: "GO", hol: "head-of-line blocking", wait: "bubble wait" };
  const EVENT_NAMES = {
    stop_sent: "STOP sent", go_sent: "GO sent", stop_received: "STOP received", go_received: "GO received",
    hol_start: "head-of-line blocking starts", hol_end: "head-of-line blocking ends",
    wait_start: "waits for a slot beyond the cable", wait_end: "stops waiting",
  };
  const LISTED = 50;
  const panel = {
    link: null,       // the selected link's index, or null
    port: null,       // the selected port's name, or null
    seen: null,       // the window the panels show
    app: null,        // /api/app over the whole run, or null
    choices: null,    // a clicked device's ports, or null
  };
  const byId = (id) => document.getElementById(id);

  function element(tag, attributes = {}, text = "") {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    if (text) e.textContent = text;
    return e;
  }

  // The panels' places on the page: the application's strips under the histogram (in
  // its column, so that they share its time axis), the link and port panels after the
  // busiest links' table.
  const style = element("style");
  style.textContent = `
    #app-strips { width: 100%; display: block; background: #fff; border: 1px solid #ddd; }
    #app-info { font-size: 12px; color: #455a64; }
    #app-info .problem { color: #b71c1c; }
    #app-info .swatch { display: inline-block; width: 10px; height: 10px; margin: 0 3px 0 10px; vertical-align: -1px; }
    #detail { display: flex; flex-wrap: wrap; gap: 16px; margin-top: 10px; }
    #detail section { background: #fff; border: 1px solid #ddd; padding: 6px 10px; min-width: 360px; flex: 1; }
    #detail h2 { font-size: 14px; margin: 0 0 4px; }
    #detail table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 12px; }
    #detail td, #detail th { padding: 1px 8px 1px 0; text-align: right; }
    #detail button { font-size: 12px; margin-right: 6px; }
    #detail .problem { color: #b71c1c; }
    #port-chart { width: 100%; height: 120px; display: block; }
    #top tbody tr { cursor: pointer; }
    #top tbody tr.selected { background: #bbdefb; }`;
  document.head.appendChild(style);
  const controls = byId("controls");
  const strips = element("canvas", { id: "app-strips", height: "0", "aria-label": "the application's task states" });
  const stripsInfo = element("div", { id: "app-info" });
  controls.insertBefore(stripsInfo, byId("slider"));
  controls.insertBefore(element("span"), byId("slider"));
  controls.insertBefore(strips, stripsInfo);
  controls.insertBefore(element("span"), stripsInfo);
  strips.style.display = "none";
  stripsInfo.style.display = "none";
  const detail = element("div", { id: "detail" });
  const linkBox = element("section", { id: "link-detail", hidden: "" });
  const portBox = element("section", { id: "port-detail", hidden: "" });
  detail.append(linkBox, portBox);
  byId("top").after(detail);

  // The window the page shows: [from, to) of view.js's last /api/window.
  function currentWindow() {
    return view.window ? [view.window.from_ns, view.window.to_ns] : [0, view.trace ? view.trace.end_ns : 1];
  }

  // --- a link's messages ---

  async function showLink() {
    if (panel.link === null) return;
    const [from, to] = currentWindow();
    let m;
    try {
      m = await getJson(`/api/link?link=${panel.link}&from_ns=${from}&to_ns=${to}&${runParam()}`);
    } catch (e) {
      linkBox.replaceChildren(element("p", { class: "problem" }, e.message));
      return;
    }
    const head = element("h2", {}, `${m.from} → ${m.to}`);
    const summary = element("p", {},
      `${m.messages} messages on it in ${timeText(m.from_ns)} – ${timeText(m.to_ns)} (${bytesText(m.bytes)}); ` +
      `${m.kept} kept (the first ${m.kept_per_group} to start in each ${m.group_bins} bins)` +
      (m.listed.length < m.kept ? `, the first ${m.listed.length} listed` : "") +
      (m.kept > LISTED ? `, ${LISTED} shown` : ""));
    const ports = element("p");
    for (const port of [m.from, m.to]) {
      const button = element("button", { type: "button" }, `port ${port}`);
      button.addEventListener("click", () => selectPort(port));
      ports.appendChild(button);
    }
    const table = element("table");
    const header = element("tr");
    for (const h of ["message (tag)", "first byte left", "waited before", "on the link", "size"]) {
      header.appendChild(element("th", {}, h));
    }
    table.appendChild(header);
    for (const msg of m.listed.slice(0, LISTED)) {
      const row = element("tr");
      for (const text of [msg.tag, timeText(msg.send_ns), timeText(msg.send_ns - msg.logical_send_ns),
        timeText(msg.receive_ns - msg.send_ns), bytesText(msg.size_bytes)]) {
        row.appendChild(element("td", {}, String(text)));
      }
      table.appendChild(row);
    }
    linkBox.replaceChildren(head, summary, ports, table);
    linkBox.hidden = false;
  }

  function selectLink(link) {
    panel.link = link;
    remember();
    showLink();
    if (view.trace && view.trace.links[link]) selectPort(view.trace.links[link].from);
    markSelectedRow();
  }

  function markSelectedRow() {
    if (!view.window) return;
    const rows = byId("top").tBodies[0].rows;
    view.window.top.forEach((l, i) => {
      if (rows[i]) rows[i].classList.toggle("selected", l.link === panel.link);
    });
  }

  // --- a port's backlog and events ---

  async function showPort() {
    if (panel.port === null) return;
    const [from, to] = currentWindow();
    let p;
    try {
      p = await getJson(`/api/port?port=${encodeURIComponent(panel.port)}&from_ns=${from}&to_ns=${to}&${runParam()}`);
    } catch (e) {
      portBox.replaceChildren(element("p", { class: "problem" }, e.message));
      portBox.hidden = false;
      return;
    }
    const highest = p.max_level.reduce((a, b) => Math.max(a, b), 0);
    const head = element("h2", {}, `port ${p.port}`);
    const summary = element("p", {},
      `backlog in ${timeText(p.from_ns)} – ${timeText(p.to_ns)}: highest level ${highest}` +
      (p.quantum_bytes !== null && highest > 0 ? ` (≤ ${bytesText(highest * p.quantum_bytes)})` : "") +
      `; ${Object.keys(MARK_NAMES).map((k) => `${p.totals[k]} ${MARK_NAMES[k]}`).join(", ")}`);
    const chart = element("canvas", { id: "port-chart", "aria-label": "the port's backlog over time, its events marked" });
    const legend = element("p");
    legend.appendChild(document.createTextNode("bars: highest backlog level per bin, line: mean; marks:"));
    for (const k of Object.keys(MARK_COLOURS)) {
      const swatch = element("span", { class: "swatch" });
      swatch.style.cssText = `display:inline-block;width:10px;height:10px;margin:0 3px 0 10px;background:${MARK_COLOURS[k]}`;
      legend.append(swatch, document.createTextNode(MARK_NAMES[k]));
    }
    const list = element("table");
    const header = element("tr");
    for (const h of ["time", "event"]) header.appendChild(element("th", {}, h));
    list.appendChild(header);
    for (const e of p.events.slice(0, LISTED)) {
      const row = element("tr");
      row.append(element("td", {}, timeText(e.at_ns)), element("td", {}, EVENT_NAMES[e.event] || e.event));
      list.appendChild(row);
    }
    const listed = element("p", {}, p.kept_events === 0 ? "no events in the window" :
      `events kept: ${p.kept_events} (the first ${p.kept_per_group} of each group of bins)` +
      (p.kept_events > LISTED ? `, the first ${LISTED} shown` : ""));
    const choices = element("p");
    for (const port of panel.choices || []) {
      const button = element("button", { type: "button" }, port);
      if (port === p.port) button.disabled = true;
      button.addEventListener("click", () => selectPort(port));
      choices.appendChild(button);
    }
    portBox.replaceChildren(head, choices, summary, chart, legend, listed, list);
    portBox.hidden = false;
    drawPortChart(chart, p);
  }

  function drawPortChart(canvas, p) {
    canvas.width = canvas.clientWidth * devicePixelRatio;
    canvas.height = canvas.clientHeight * devicePixelRatio;
    const g = canvas.getContext("2d");
    g.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    const [cw, ch] = [canvas.clientWidth, canvas.clientHeight];
    const n = Math.max(1, p.max_level.length);
    const markRows = Object.keys(MARK_COLOURS);
    const bottom = ch - 6 * markRows.length - 14;
    const most = Math.max(1, ...p.max_level);
    const x = (i) => (i / n) * cw;
    g.fillStyle = "#90a4ae";
    p.max_level.forEach((level, i) => {
      const h = (level / most) * (bottom - 4);
      g.fillRect(x(i), bottom - h, Math.max(1, cw / n - 0.5), h);
    });
    g.strokeStyle = "#263238";
    g.beginPath();
    p.mean_level.forEach((level, i) => {
      const y = bottom - (level / most) * (bottom - 4);
      if (i === 0) g.moveTo(x(i), y); else g.lineTo(x(i), y);
      g.lineTo(x(i + 1), y);
    });
    g.stroke();
    markRows.forEach((k, row) => {
      const counts = p.marks[k];
      const top = Math.max(1, ...counts);
      g.fillStyle = MARK_COLOURS[k];
      counts.forEach((c, i) => {
        if (c > 0) {
          g.globalAlpha = 0.35 + 0.65 * (c / top);
          g.fillRect(x(i), bottom + 2 + 6 * row, Math.max(2, cw / n - 0.5), 5);
        }
      });
      g.globalAlpha = 1;
    });
    g.fillStyle = "#455a64";
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "bottom";
    g.fillText(`level ${most}`, 2, 12);
    g.fillText(timeText(p.from_ns), 2, ch);
    const end = timeText(p.to_ns);
    g.fillText(end, cw - g.measureText(end).width - 2, ch);
  }

  function selectPort(port) {
    panel.port = port;
    remember();
    showPort();
  }

  // The selection in the address (#link=3&port=sw0.p1), to come back to it.
  function remember() {
    const parts = [];
    if (panel.link !== null) parts.push(`link=${panel.link}`);
    if (panel.port !== null) parts.push(`port=${encodeURIComponent(panel.port)}`);
    history.replaceState(null, "", `#${parts.join("&")}`);
  }

  function recall() {
    const selected = new URLSearchParams(location.hash.slice(1));
    const link = Number.parseInt(selected.get("link"), 10);
    if (Number.isInteger(link) && link >= 0) panel.link = link;
    if (selected.get("port")) panel.port = selected.get("port");
  }

  // --- the application's task states ---

  async function loadApp() {
    let app;
    try {
      app = await getJson("/api/app");
    } catch (e) {
      if (!e.message.includes(": 404 ")) {
        showAppInfo(`the application trace: ${e.message}`, true);
        setTimeout(loadApp, 2000);
      }
      return;
    }
    panel.app = app;
    if (app.problem) showAppInfo(`${app.file}: ${app.problem}`, true);
    else showAppInfo(null, false);
    drawApp();
    if (app.loading) setTimeout(loadApp, 500);
  }

  function showAppInfo(problem, isProblem) {
    stripsInfo.style.display = "block";
    stripsInfo.replaceChildren();
    if (problem) stripsInfo.appendChild(element("span", { class: isProblem ? "problem" : "" }, problem + " "));
    const app = panel.app;
    if (!app) return;
    stripsInfo.appendChild(document.createTextNode(`${app.file}: ${app.threads.length} tasks;`));
    app.states.forEach((s, i) => {
      const swatch = element("span", { class: "swatch" });
      swatch.style.background = stateColour(s, i);
      stripsInfo.append(swatch, document.createTextNode(s.name));
    });
  }

  function stateColour(state, i) {
    if (state.colour) return state.colour;
    return `hsl(${(i * 67) % 360}, 60%, 55%)`;
  }

  // A strip per thread, each bin coloured by the state it spent most time in, on the
  // histogram's time axis (x = time / (bins × bin width) of the network trace).
  function drawApp() {
    const app = panel.app;
    if (!app || !view.trace || app.threads.length === 0) return;
    const t = view.trace;
    const rowPx = Math.max(1, Math.min(8, Math.floor(240 / app.threads.length)));
    const cssHeight = Math.min(app.threads.length * rowPx, 480);
    strips.style.display = "block";
    strips.style.height = `${cssHeight}px`;
    strips.width = strips.clientWidth * devicePixelRatio;
    strips.height = cssHeight * devicePixelRatio;
    const g = strips.getContext("2d");
    g.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    const cw = strips.clientWidth;
    const span = Math.max(1, t.bins) * t.bin_ns;
    const x = (ns) => (ns / span) * cw;
    const h = cssHeight / app.threads.length;
    const colours = app.states.map(stateColour);
    app.threads.forEach((thread, row) => {
      thread.dominant.forEach((s, b) => {
        if (s === null) return;
        const from = app.from_ns + b * app.bin_ns;
        g.fillStyle = colours[s];
        g.fillRect(x(from), row * h, Math.max(0.5, x(from + app.bin_ns) - x(from)), Math.max(1, h - (h > 3 ? 1 : 0)));
      });
    });
    if (view.window) {
      const [from, to] = currentWindow();
      g.strokeStyle = "#1565c0";
      g.lineWidth = 2;
      g.strokeRect(x(from), 1, Math.max(2, x(to) - x(from)), cssHeight - 2);
    }
  }

  // --- selection on the page ---

  // The link under (x, y) on the network's canvas, or null.
  function linkAt(x, y) {
    const t = view.trace;
    if (!t || !view.places.length) return null;
    let best = null;
    let bestDistance = 5;
    t.links.forEach((link, i) => {
      const p = view.places[link.from_device];
      const q = view.places[link.to_device];
      if (!p || !q) return;
      const [x0, y0, x1, y1] = typeof linkEnds === "function" ? linkEnds(link, i) : [p.x, p.y, q.x, q.y];
      const [dx, dy] = [x1 - x0, y1 - y0];
      const f = Math.max(0, Math.min(1, ((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy || 1)));
      const distance = Math.hypot(x0 + f * dx - x, y0 + f * dy - y);
      if (distance < bestDistance) [best, bestDistance] = [i, distance];
    });
    return best;
  }

  // The device under (x, y), or null.
  function deviceAt(x, y) {
    const i = view.places.findIndex((p) => Math.hypot(p.x - x, p.y - y) < 6);
    return i < 0 ? null : i;
  }

  // A device's ports that the trace's links show, the one sending the most in the
  // window first.
  function portsOf(device) {
    const t = view.trace;
    const sent = new Map();
    t.links.forEach((l, i) => {
      const load = view.window ? view.window.bytes[i] || 0 : 0;
      if (l.from_device === device) sent.set(l.from, (sent.get(l.from) || 0) + load);
      if (l.to_device === device && !sent.has(l.to)) sent.set(l.to, 0);
    });
    return [...sent.entries()].sort((a, b) => b[1] - a[1]).map(([port]) => port);
  }

  function selectDevice(device) {
    const ports = portsOf(device);
    if (ports.length === 0) return;
    selectPort(ports[0]);
    panel.choices = ports;
  }

  byId("network").addEventListener("click", (e) => {
    const r = e.target.getBoundingClientRect();
    const [x, y] = [e.clientX - r.left, e.clientY - r.top];
    const device = deviceAt(x, y);
    if (device !== null) {
      selectDevice(device);
      return;
    }
    panel.choices = null;
    const link = linkAt(x, y);
    if (link !== null) selectLink(link);
  });
  byId("top").tBodies[0].addEventListener("click", (e) => {
    const row = e.target.closest("tr");
    if (!row || !view.window) return;
    const l = view.window.top[row.sectionRowIndex];
    if (l) selectLink(l.link);
  });

  // Follows view.js: a new window (the slider, the width, follow mode) refreshes the
  // panels; a resize redraws the strips.
  setInterval(() => {
    if (view.window && view.window !== panel.seen) {
      panel.seen = view.window;
      markSelectedRow();
      showLink();
      showPort();
      drawApp();
    }
  }, 150);
  window.addEventListener("resize", drawApp);
  recall();
  loadApp();
})();
