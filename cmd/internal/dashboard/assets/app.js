// The dashboard: one state object pushed by the server (Server-Sent
// Events), drawn whole each time; charts by dygraphs.
"use strict";
const graphs = {};

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function esc(s) {
  return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function drawGrid(ex) {
  const t = document.getElementById("grid");
  t.replaceChildren();
  const head = el("tr");
  head.append(el("th", {}, "cell"));
  for (let r = 1; r <= ex.runs; r++) head.append(el("th", {}, "run " + r));
  head.append(el("th", {}, "median accepted records per lab second (valid runs)"));
  t.append(head);
  for (const c of ex.cells) {
    const tr = el("tr");
    tr.append(el("td", {}, c.cell));
    for (const s of c.runs) tr.append(el("td", {class: s, "data-status": s}, s));
    tr.append(el("td", {}, c.median || ""));
    t.append(tr);
  }
}

function drawVerdicts(ex) {
  const t = document.getElementById("verdicts");
  t.replaceChildren();
  const head = el("tr");
  for (const h of ["id", ex.final ? "verdict" : "verdict so far", "claim"]) head.append(el("th", {}, h));
  t.append(head);
  for (const v of ex.verdicts) {
    const tr = el("tr", {"data-id": v.id});
    tr.append(el("td", {}, v.id));
    const cls = v.verdict === "pending" ? "pending-v" : v.verdict;
    tr.append(el("td", {class: cls, "data-verdict": v.verdict}, v.verdict + (v.label ? " (" + v.label.trim() + ")" : "")));
    tr.append(el("td", {class: "claim"}, v.claim));
    t.append(tr);
  }
  const cal = document.getElementById("calibration");
  cal.replaceChildren();
  for (const line of ex.calibration || []) cal.append(el("div", {}, "time-scale bias of " + line));
}

// legendOf is a chart's legend: with no point chosen, each series' name;
// at a point, the x axis's label and value, then each series' value there
// with its unit (only the highlighted series' when many have one). A
// series with no value there (null: a break in its line) is left out.
function legendOf(c) {
  return (data) => {
    if (data.x === undefined) return data.series.map((s) => "<span class='series'>" + s.dashHTML + " " + s.labelHTML + "</span>").join(" ");
    let shown = data.series.filter((s) => s.isVisible && s.yHTML !== undefined);
    const hi = shown.filter((s) => s.isHighlighted);
    if (shown.length > 6 && hi.length) shown = hi;
    return esc(c.xlabel) + ": " + data.xHTML + " — " + shown.map((s) => "<span" + (s.isHighlighted ? ' class="highlight"' : "") +
      "><b style='color: " + s.color + "'>" + s.labelHTML + "</b> " + s.yHTML + " " + esc(c.yunit) + "</span>").join("; ");
  };
}

// wholeTicks are ticks at the whole numbers only (run numbers).
function wholeTicks(min, max) {
  const ticks = [];
  const step = Math.max(1, Math.ceil((max - min) / 10));
  for (let v = Math.ceil(min); v <= max; v += step) ticks.push({v: v, label: String(v)});
  return ticks;
}

function drawChart(c) {
  let g = graphs[c.id];
  const series = {};
  for (const name of c.dashed || []) series[name] = {strokePattern: Dygraph.DASHED_LINE, strokeWidth: 1.5};
  // A null value is a break: points on either side of it are never joined.
  const opts = {labels: c.labels, xlabel: c.xlabel, ylabel: c.ylabel, series: series, legend: "always", legendFormatter: legendOf(c),
    labelsSeparateLines: false, includeZero: true, drawPoints: c.rows.length < 40, strokeWidth: 1.8, fillGraph: false,
    connectSeparatedPoints: false, drawGapEdgePoints: true, highlightSeriesOpts: {strokeWidth: 3, highlightCircleSize: 4},
    yLabelWidth: 16, pointSize: 2};
  if (c.xwhole) Object.assign(opts, {axes: {x: {ticker: wholeTicks}}, xRangePad: 24});
  if (!g) {
    const box = el("div", {"data-chart": c.id});
    box.append(el("div", {class: "chart-title"}, c.title));
    const legend = el("div", {class: "legend"});
    box.append(legend);
    const area = el("div", {class: "chart", id: "chart-" + c.id});
    box.append(area);
    document.getElementById("charts").append(box);
    opts.labelsDiv = legend;
    g = graphs[c.id] = new Dygraph(area, c.rows.length ? c.rows : [[0].concat(c.labels.slice(1).map(() => 0))], opts);
  } else {
    opts.labelsDiv = document.querySelector('[data-chart="' + c.id + '"] .legend');
    g.updateOptions(Object.assign({file: c.rows}, opts));
    document.querySelector('[data-chart="' + c.id + '"] .chart-title').textContent = c.title;
  }
}

function draw(st) {
  document.title = "loadlab: " + st.title + " (" + st.status + ")";
  document.getElementById("title").textContent = st.title;
  const s = document.getElementById("status");
  s.textContent = st.status;
  s.className = "status " + st.status;
  document.getElementById("message").textContent = st.message || "";
  const rep = document.getElementById("report");
  if (st.report) { rep.href = st.report; rep.hidden = false; }
  const facts = document.getElementById("facts");
  facts.replaceChildren();
  for (const f of st.facts || []) facts.append(el("span", {}, f));
  document.getElementById("timeunit").textContent = st.time_unit || "";
  const expl = document.getElementById("exploratory");
  expl.hidden = !(st.experiment && st.experiment.exploratory);
  if (!expl.hidden) document.getElementById("exploratory-why").textContent = st.experiment.exploratory;
  if (st.experiment) {
    const ex = st.experiment;
    document.getElementById("experiment").hidden = false;
    document.getElementById("progress").textContent = ex.done + " of " + ex.total + " runs ended" +
      (ex.time_left ? ", " + ex.time_left : "") + (ex.current ? "; now: " + ex.current : "");
    drawGrid(ex);
    drawVerdicts(ex);
  }
  document.body.setAttribute("data-status", st.status);
  for (const c of st.charts || []) {
    try { drawChart(c); } catch (e) { console.error("chart " + c.id + ": " + e); }
  }
  const secs = Math.round((new Date(st.now) - new Date(st.started)) / 1000);
  document.getElementById("foot").textContent = "started " + st.started.replace("T", " ").slice(0, 19) + " UTC, " + secs +
    " s ago; updates not shown because the page was behind: " + st.dropped + " (the latest is always shown)";
  document.body.setAttribute("data-status", st.status);
}

const events = new EventSource("events");
events.onmessage = (m) => {
  const st = JSON.parse(m.data);
  window.loadlabState = st;
  draw(st);
};
// The work ended and the command stopped serving: the page keeps its last
// state instead of reconnecting for ever.
events.onerror = () => {
  const st = window.loadlabState;
  if (st && st.status !== "running") events.close();
};
