// The gallery's explorer (see explorer.rs): draws the analysed matrices, forgetting
// curves and training histories held in #explorer-data. It computes no statistic: every
// number it shows is looked up in the data. The state lives in the URL's fragment
// (#study=..&model=..), so a view can be linked.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const LINES = ["#1F77B4", "#FF7F0E"];
  const $ = (id) => document.getElementById(id);
  const state = { study: 0, model: 0, seed: "mean", compare: "", view: "raw", through: 1 };
  let timer = null;
  let cursor = null; // [i, j] of the matrix cell being read

  function el(tag, attrs, parent, ns) {
    const e = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  const svgEl = (tag, attrs, parent) => el(tag, attrs, parent, true);
  function text(parent, x, y, s, attrs) {
    const t = svgEl("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function option(select, value, label) {
    const o = el("option", { value: value }, select);
    o.textContent = label;
  }

  const study = () => DATA.studies[state.study];
  const fmt = (v) => (v * study().scale).toFixed(study().decimals);
  const signed = (v) => (v > 0 ? "+" : "") + fmt(v);
  const modelAt = (n) => study().models[n];
  const compared = () => {
    const n = study().models.findIndex((m) => m.name === state.compare);
    return n >= 0 && n !== state.model ? modelAt(n) : null;
  };
  const seedOf = (m) =>
    state.seed === "mean" ? null : m.seeds.find((s) => String(s.seed) === state.seed) || null;
  const seedLabel = (m) => {
    const s = seedOf(m);
    if (s) return "seed " + s.seed;
    return "mean of " + m.seeds.length + " seed" + (m.seeds.length === 1 ? "" : "s");
  };

  // The grid a panel shows, with what the readout says of a cell.
  function shown(m) {
    const s = seedOf(m);
    if (state.view === "raw") return { cells: s ? s.cells : m.mean, deviation: false };
    return { cells: s ? s.deviation : m.deviation, deviation: true };
  }
  // The palette's colour nearest to t in [0, 1].
  const pick = (palette, t) => palette[Math.round(Math.min(1, Math.max(0, t)) * (palette.length - 1))];
  function colour(v, deviation) {
    const st = study();
    let t = 0.5;
    if (deviation) {
      if (st.deviation_bound > 0) t = 0.5 + v / (2 * st.deviation_bound);
    } else if (st.raw_range[1] > st.raw_range[0]) {
      t = (v - st.raw_range[0]) / (st.raw_range[1] - st.raw_range[0]);
    }
    return pick(deviation ? DATA.diverging : DATA.sequential, t);
  }
  function describe(m, i, j) {
    const st = study();
    const where =
      m.name + ", " + seedLabel(m) + ": trained through " + st.slices[i] + ", evaluated on " + st.slices[j] + ": ";
    if (i >= state.through) return where + "not trained yet at this step of the replay";
    const s = seedOf(m);
    if (s && s.collapsed[i] && s.cells[i][j] === null) return where + "checkpoint collapsed, left out";
    const g = shown(m);
    if (!g.cells) return where + "the cohort has no grid of this seed";
    const v = g.cells[i][j];
    if (v === null) return where + "no value";
    const raw = s ? s.cells[i][j] : m.mean[i][j];
    const sd = !s && m.std[i][j] !== null ? "sd " + fmt(m.std[i][j]) + " over the seeds" : "";
    let out = g.deviation
      ? signed(v) + " from the cohort mean (cell " + fmt(raw) + (sd ? ", " + sd : "") + ")"
      : fmt(v) + (sd ? " (" + sd + ")" : "");
    if (s && s.collapsed[i]) out += "; this checkpoint collapsed";
    return where + out;
  }

  // One model's matrix: row i (trained through slice i) upward from the bottom, columns
  // rightward, a colour bar at the right.
  function matrixPanel(m, parent) {
    const st = study();
    const k = st.slices.length;
    const g = shown(m);
    const cell = k > 12 ? 22 : 34;
    const left = 70, top = 10, size = cell * k;
    const width = left + size + 84, height = top + size + 48;
    const fig = el("figure", { class: "panel" }, parent);
    const cap = el("figcaption", {}, fig);
    cap.textContent = m.name + (m.baseline ? " (counting baseline)" : "") + ", " + seedLabel(m);
    const svg = svgEl("svg", {
      width: width, height: height, viewBox: "0 0 " + width + " " + height, "font-size": 11,
      tabindex: 0, role: "application", "data-model": m.name,
      "aria-label": "Matrix of " + m.name + ": arrow keys move, up is a later cutoff",
    }, fig);
    const y = (i) => top + cell * (k - 1 - i);
    const s = seedOf(m);
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        const v = g.cells ? g.cells[i][j] : null;
        const future = i >= state.through;
        const r = svgEl("rect", {
          class: future ? "cell future" : v === null ? "cell empty" : "cell",
          x: left + cell * j, y: y(i), width: cell, height: cell,
          fill: future ? "#FFFFFF" : v === null ? DATA.empty : colour(v, g.deviation),
          "data-i": i, "data-j": j,
        }, svg);
        svgEl("title", {}, r).textContent = describe(m, i, j);
      }
    }
    svgEl("line", {
      x1: left, y1: top + size, x2: left + size, y2: top,
      stroke: "#fff", "stroke-dasharray": "4 3", "pointer-events": "none",
    }, svg);
    const every = k > 16 ? 2 : 1;
    for (let n = 0; n < k; n += every) {
      const label = st.slices[n] + (s && s.collapsed[n] ? " ✕" : "");
      text(svg, left - 4, y(n) + cell / 2, label, { "text-anchor": "end", "dominant-baseline": "middle" });
      const c = left + cell * n + cell / 2;
      text(svg, 0, 0, st.slices[n], {
        transform: "translate(" + c + "," + (top + size + 8) + ") rotate(-45)", "text-anchor": "end",
      });
    }
    colourBar(svg, left + size + 14, top, size, g.deviation);
    svgEl("rect", { class: "cursor", width: cell, height: cell, visibility: "hidden" }, svg);
    svg.addEventListener("mouseover", (e) => {
      const r = e.target.closest("rect.cell");
      if (r) moveCursor(+r.dataset.i, +r.dataset.j);
    });
    svg.addEventListener("focus", () => moveCursor(cursor ? cursor[0] : 0, cursor ? cursor[1] : 0));
    svg.addEventListener("keydown", (e) => {
      const step = { ArrowUp: [1, 0], ArrowDown: [-1, 0], ArrowRight: [0, 1], ArrowLeft: [0, -1] }[e.key];
      if (!step) return;
      e.preventDefault();
      const c = cursor || [0, 0];
      const clamp = (v) => Math.min(k - 1, Math.max(0, v));
      moveCursor(clamp(c[0] + step[0]), clamp(c[1] + step[1]));
    });
    svg.dataset.cell = cell;
    svg.dataset.left = left;
    svg.dataset.top = top;
  }

  function colourBar(svg, x, top, size, deviation) {
    const st = study();
    const steps = 24, h = size / steps;
    for (let n = 0; n < steps; n++) {
      svgEl("rect", {
        x: x, y: top + size - h * (n + 1), width: 12, height: h + 0.5,
        fill: pick(deviation ? DATA.diverging : DATA.sequential, (n + 0.5) / steps),
      }, svg);
    }
    const lo = deviation ? -st.deviation_bound : st.raw_range[0];
    const hi = deviation ? st.deviation_bound : st.raw_range[1];
    const f = deviation ? signed : fmt;
    [[top + size, lo], [top + size / 2, (lo + hi) / 2], [top, hi]].forEach(([yy, v]) =>
      text(svg, x + 15, yy, f(v), { "dominant-baseline": "middle" }));
  }

  // The cell read, in every panel at once, and the readout under them.
  function moveCursor(i, j) {
    cursor = [i, j];
    const k = study().slices.length;
    const lines = [];
    document.querySelectorAll("#panels svg").forEach((svg) => {
      const cell = +svg.dataset.cell;
      const c = svg.querySelector("rect.cursor");
      c.setAttribute("x", +svg.dataset.left + cell * j);
      c.setAttribute("y", +svg.dataset.top + cell * (k - 1 - i));
      c.setAttribute("visibility", "visible");
      const m = study().models.find((mm) => mm.name === svg.dataset.model);
      lines.push(describe(m, i, j));
    });
    $("readout").textContent = lines.join(" | ");
  }

  // A line chart of series {label, colour, points: [[x, y, text]], band: [[x, lo, hi]],
  // dashed}; every point readable on hover and by keyboard (Tab).
  function chart(parent, title, xLabel, yLabel, series) {
    const width = 440, height = 260, left = 56, right = 12, top = 24, bottom = 44;
    const fig = el("figure", { class: "chart" }, parent);
    const svg = svgEl("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, "font-size": 11 }, fig);
    text(svg, left, 14, title, { "font-weight": "bold" });
    const xs = [], ys = [];
    series.forEach((s) => {
      s.points.forEach((p) => { xs.push(p[0]); ys.push(p[1]); });
      (s.band || []).forEach((b) => { ys.push(b[1], b[2]); });
    });
    if (!xs.length) return fig;
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    const pad = (y1 - y0) * 0.05 || Math.abs(y0) * 0.05 || 1;
    y0 -= pad; y1 += pad;
    const X = (v) => left + ((v - x0) / (x1 - x0)) * (width - left - right);
    const Y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (height - top - bottom);
    svgEl("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: "#888" }, svg);
    svgEl("line", { x1: left, y1: top, x2: left, y2: height - bottom, stroke: "#888" }, svg);
    for (let n = 0; n <= 4; n++) {
      const v = y0 + ((y1 - y0) * n) / 4;
      text(svg, left - 4, Y(v), v.toPrecision(3), { "text-anchor": "end", "dominant-baseline": "middle" });
      svgEl("line", { x1: left, y1: Y(v), x2: width - right, y2: Y(v), stroke: "#eee" }, svg);
    }
    const xTicks = Math.min(8, x1 - x0);
    for (let n = 0; n <= xTicks; n++) {
      const v = Math.round(x0 + ((x1 - x0) * n) / xTicks);
      text(svg, X(v), height - bottom + 14, String(v), { "text-anchor": "middle" });
    }
    text(svg, (left + width) / 2, height - 8, xLabel, { "text-anchor": "middle" });
    text(svg, 12, (top + height - bottom) / 2, yLabel, {
      "text-anchor": "middle", transform: "rotate(-90 12 " + (top + height - bottom) / 2 + ")",
    });
    series.forEach((s) => {
      if (s.band && s.band.length) {
        const upper = s.band.map((b) => X(b[0]) + "," + Y(b[2]));
        const lower = s.band.slice().reverse().map((b) => X(b[0]) + "," + Y(b[1]));
        svgEl("polygon", { points: upper.concat(lower).join(" "), fill: s.colour, "fill-opacity": 0.18, class: "band" }, svg);
      }
      svgEl("polyline", {
        points: s.points.map((p) => X(p[0]) + "," + Y(p[1])).join(" "),
        fill: "none", stroke: s.colour, "stroke-width": 1.8,
        "stroke-dasharray": s.dashed ? "5 3" : "none",
      }, svg);
      s.points.forEach((p) => {
        const c = svgEl("circle", { cx: X(p[0]), cy: Y(p[1]), r: 3.2, fill: s.colour, tabindex: 0, class: "point" }, svg);
        svgEl("title", {}, c).textContent = p[2];
        const read = () => { $("readout").textContent = p[2]; };
        c.addEventListener("mouseenter", read);
        c.addEventListener("focus", read);
      });
    });
    const legend = el("figcaption", {}, fig);
    series.filter((s) => s.label).forEach((s) => {
      const key = el("span", { class: "key" }, legend);
      el("span", { class: "swatch", style: "background:" + s.colour }, key);
      key.appendChild(document.createTextNode(s.label));
    });
    return fig;
  }

  function forgetting() {
    const root = $("forgetting");
    root.textContent = "";
    const st = study();
    const unit = st.metric + (st.scale === 100 ? " ×100" : "");
    const series = [];
    [modelAt(state.model), compared()].filter(Boolean).forEach((m, n) => {
      const pts = m.forgetting.map((p) => [p.lag, p.mean * st.scale,
        m.name + ", mean of " + m.seeds.length + " seeds at lag " + p.lag + ": " + fmt(p.mean) +
        (p.std === null ? "" : " (sd " + fmt(p.std) + ")")]);
      const band = m.forgetting.filter((p) => p.std !== null)
        .map((p) => [p.lag, (p.mean - p.std) * st.scale, (p.mean + p.std) * st.scale]);
      series.push({ label: m.name + " (mean, band ±1 sd over seeds)", colour: LINES[n], points: pts, band: band });
      const s = seedOf(m);
      if (s) {
        series.push({
          label: m.name + " seed " + s.seed, colour: LINES[n], dashed: true,
          points: s.forgetting.map((p) => [p[0], p[1] * st.scale, m.name + ", seed " + s.seed + " at lag " + p[0] + ": " + fmt(p[1])]),
        });
      }
    });
    chart(root, "Mean score at each lag (evaluated on minus trained through)", "lag (slices)", unit, series);
  }

  function historyView() {
    const root = $("history");
    root.textContent = "";
    const st = study();
    [modelAt(state.model), compared()].filter(Boolean).forEach((m) => {
      const block = el("div", { class: "history" }, root);
      const picked = seedOf(m) || m.seeds.find((s) => s.history) || m.seeds[0];
      const h = el("h3", {}, block);
      h.textContent = m.name + ", seed " + picked.seed;
      if (!picked.history) {
        const p = el("p", { class: "note" }, block);
        p.textContent = m.baseline
          ? "A counting baseline is not trained: it has no history."
          : "This run recorded no training history: it was made before drift wrote history.json. Retraining it (drift study) records one.";
        return;
      }
      const row = el("div", { class: "pair" }, block);
      const series = (field, what) => picked.history
        .map((c, i) => ({ c: c, i: i }))
        .filter((x) => x.i < state.through && x.c.epochs.length)
        .map((x) => ({
          label: x.c.cutoff + (picked.collapsed[x.i] ? " (collapsed)" : ""),
          colour: pick(DATA.sequential, x.i / Math.max(1, st.slices.length - 1)),
          dashed: picked.collapsed[x.i],
          points: x.c.epochs.map((e) => [e.epoch, e[field], m.name + ", seed " + picked.seed + ", cutoff " + x.c.cutoff + ", epoch " + e.epoch + ": " + what + " " + e[field].toPrecision(4)]),
        }));
      chart(row, "Mean training loss per epoch, by cutoff", "epoch", "loss", series("loss", "loss"));
      chart(row, "Gradient norm before clipping (epoch mean)", "epoch", "norm", series("grad_norm", "gradient norm"));
    });
  }

  function render() {
    const st = study();
    const k = st.slices.length;
    state.through = Math.min(Math.max(1, state.through), k);
    const through = $("through");
    through.max = k;
    through.value = state.through;
    $("through-label").textContent =
      "trained through " + st.slices[state.through - 1] + " (" + state.through + " of " + k + ")";
    const m = modelAt(state.model);
    const c = compared();
    $("about").innerHTML = "";
    $("about").append(
      st.title + ": " + st.models.length + " models, slices " + st.slices[0] + " to " + st.slices[k - 1] +
      ", " + st.metric + (st.scale === 100 ? " ×100" : "") + " (" + (st.higher_is_better ? "higher" : "lower") +
      " is better). Rows: trained through, oldest at the bottom; columns: evaluated on. Tables: ");
    el("a", { href: st.page }, $("about")).textContent = st.page;
    const panels = $("panels");
    panels.textContent = "";
    [m, c].filter(Boolean).forEach((mm) => matrixPanel(mm, panels));
    if (cursor && cursor[0] < k && cursor[1] < k) moveCursor(cursor[0], cursor[1]);
    else cursor = null;
    forgetting();
    historyView();
    $("play").textContent = timer ? "Pause" : "Play";
    const p = new URLSearchParams({
      study: st.name, model: m.name, seed: state.seed, view: state.view, through: st.slices[state.through - 1],
    });
    if (c) p.set("compare", c.name);
    window.history.replaceState(null, "", "#" + p.toString());
  }

  // The pickers of the chosen study.
  function fillPickers() {
    const st = study();
    const model = $("model"), compare = $("compare"), seed = $("seed");
    model.textContent = "";
    compare.textContent = "";
    option(compare, "", "nothing");
    st.models.forEach((m, n) => {
      const label = m.name + (m.baseline ? " (baseline)" : "");
      option(model, n, label);
      option(compare, m.name, label);
    });
    model.value = state.model;
    compare.value = state.compare;
    const seeds = new Set();
    st.models[state.model].seeds.forEach((s) => seeds.add(String(s.seed)));
    seed.textContent = "";
    option(seed, "mean", "seed mean");
    seeds.forEach((s) => option(seed, s, "seed " + s));
    if (state.seed !== "mean" && !seeds.has(state.seed)) state.seed = "mean";
    seed.value = state.seed;
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
  }

  function fromHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const n = DATA.studies.findIndex((s) => s.name === p.get("study"));
    state.study = n >= 0 ? n : 0;
    const st = study();
    const m = st.models.findIndex((mm) => mm.name === p.get("model"));
    state.model = m >= 0 ? m : Math.max(0, st.models.findIndex((mm) => !mm.baseline));
    state.seed = p.get("seed") || "mean";
    state.compare = p.get("compare") || "";
    state.view = p.get("view") === "deviation" ? "deviation" : "raw";
    const t = st.slices.indexOf(p.get("through"));
    state.through = t >= 0 ? t + 1 : st.slices.length;
  }

  function init() {
    DATA.studies.forEach((s, n) => option($("study"), n, s.title));
    fromHash();
    $("study").value = state.study;
    fillPickers();
    document.querySelector("input[name=view][value=" + state.view + "]").checked = true;
    $("study").addEventListener("change", (e) => {
      stop();
      state.study = +e.target.value;
      const st = study();
      state.model = Math.max(0, st.models.findIndex((m) => !m.baseline));
      state.compare = "";
      state.through = st.slices.length;
      cursor = null;
      fillPickers();
      render();
    });
    $("model").addEventListener("change", (e) => {
      state.model = +e.target.value;
      fillPickers();
      render();
    });
    $("seed").addEventListener("change", (e) => { state.seed = e.target.value; render(); });
    $("compare").addEventListener("change", (e) => { state.compare = e.target.value; render(); });
    document.querySelectorAll("input[name=view]").forEach((r) =>
      r.addEventListener("change", (e) => { state.view = e.target.value; render(); }));
    $("through").addEventListener("input", (e) => { stop(); state.through = +e.target.value; render(); });
    $("back").addEventListener("click", () => { stop(); state.through -= 1; render(); });
    $("forward").addEventListener("click", () => { stop(); state.through += 1; render(); });
    $("play").addEventListener("click", () => {
      if (timer) { stop(); render(); return; }
      const k = study().slices.length;
      if (state.through >= k) state.through = 0;
      timer = setInterval(() => {
        state.through += 1;
        if (state.through >= study().slices.length) stop();
        render();
      }, 700);
      state.through += 1;
      render();
    });
    $("controls").addEventListener("submit", (e) => e.preventDefault());
    render();
  }
  init();
})();
