// The interactive Adams chart: a canvas for dots and lines, DOM axes and tooltip, toggles and a page switch.
// Plain DOM, no library. Chart units are those of our SVG (charts/geometry.py): stem n at x = margin +
// (n - min_n) * grid, filtration s at y = margin + (max_s - s) * grid. The view maps them to CSS pixels of the
// canvas: screen = chart * scale + offset. One canvas redraw per animation frame keeps thousands of dots smooth;
// on a chart too large to redraw in a frame, a pan or zoom moves a snapshot of the last frame and the chart is
// redrawn once the gesture pauses. A C-motivic page (charts/motivic_page.py) gives its classes colours, names and
// notes, its product lines powers of tau (drawn dashed when nonzero), and a legend of the colours.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("chart-data").textContent);
  const F = data.frame;
  const canvas = document.getElementById("chart");
  const ctx = canvas.getContext("2d");
  const tooltip = document.getElementById("tooltip");
  const xAxis = document.getElementById("x-axis");
  const yAxis = document.getElementById("y-axis");
  const xTitle = document.getElementById("x-title");
  const plot = document.getElementById("plot");
  const D2 = { name: "d2", color: data.d2_color, dashed: false };  // the reference draws d2 in blue
  const ops = data.ops;  // each with its colour, the SVG's (charts/style.py)
  const pages = data.pages.map(preparePage);
  const hidden = new Set();
  const view = { scale: 1, ox: 0, oy: 0 };
  const HEAVY = 3000;  // dots and lines in a frame above which gestures move a snapshot instead of redrawing
  const SETTLE_MS = 150;  // the pause after the last wheel or drag event that brings the full redraw
  const PAD = 10;  // CSS pixels around the fitted chart's outer dots: room for half an axis label
  const DOT = 6, RIGHT = 20;  // chart units beyond the outer dots' centres (a dot's reach; a crowded cell's count)
  const snapshot = { canvas: document.createElement("canvas"), view: null };
  const stats = { firstFrame: null, lastDraw: null, drawnLines: {}, dashedLines: 0, drawnDots: 0, quickFrames: 0 };
  let page = data.start || 0, width = 0, height = 0, scheduled = false, quick = false, settle = null, drag = null;
  let lastSize = "";  // the plot's size at the last fit

  const chartX = (n) => F.margin + (n - F.min_n) * F.grid;
  const chartY = (s) => F.margin + (F.max_s - s) * F.grid;
  const stemAt = (x) => F.min_n + (x - F.margin) / F.grid;
  const filtrationAt = (y) => F.max_s - (y - F.margin) / F.grid;

  // A page's classes, their lines, and the lookups tooltips and hit tests need.
  function preparePage(p) {
    const count = p.classes.length / 3;
    const cells = new Map();
    const out = Array.from({ length: count }, () => []);
    const into = Array.from({ length: count }, () => []);
    for (let k = 0; k < count; k++) {
      const key = p.classes[3 * k] + "," + p.classes[3 * k + 1];
      if (!cells.has(key)) cells.set(key, []);
      cells.get(key).push(k);
    }
    const lines = { ...p.lines };
    if (p.d2) lines.d2 = p.d2;
    const powers = p.powers || {};
    for (const [op, pairs] of Object.entries(lines)) {
      for (let e = 0; e < pairs.length; e += 2) {
        const power = powers[op] ? powers[op][e / 2] : 0;  // the product is tau^power times the target
        out[pairs[e]].push([op, pairs[e + 1], power]);
        into[pairs[e + 1]].push([op, pairs[e], power]);
      }
    }
    const palette = p.colors ? [...new Set(p.colors)] : ["#000"];
    return { ...p, count, cells, out, into, lines, powers, palette };
  }

  function className(P, k) {
    if (P.labels && P.labels[k] !== undefined) return P.labels[k];
    const c = P.classes;
    return "x_(" + c[3 * k] + ", " + c[3 * k + 1] + ", " + c[3 * k + 2] + ")";
  }

  // -- view -------------------------------------------------------------------------------------------------
  // The canvas is as tall as the fitted chart needs (at most the room the plot has below the bar, less the stem
  // labels and title), so the stem labels sit under its s = 0 row and what the window has beyond the chart is left
  // below the axis title or right of the chart, never between the chart and its axes.
  function layout() {
    const room = plot.clientHeight - xAxis.offsetHeight - xTitle.offsetHeight;
    width = canvas.clientWidth;
    height = Math.max(0, Math.min(room, Math.ceil(fitScaleFor(width, room) * (spanY() + 2 * DOT) + 2 * PAD)));
    canvas.style.height = height + "px";
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }

  // What a fitted view shows, in chart units: the stems and rows, DOT beyond the outer dots' centres (RIGHT on the
  // right, where a crowded cell writes its count), and PAD CSS pixels beyond that for the axis labels' halves.
  const spanX = () => chartX(F.max_n) - chartX(F.min_n) + DOT + RIGHT;
  const spanY = () => chartY(0) - chartY(F.max_s);

  function fitScaleFor(w, h) {
    return Math.max(0, Math.min((w - 2 * PAD) / spanX(), (h - 2 * PAD) / (spanY() + 2 * DOT)));
  }

  function fitScale() {
    return fitScaleFor(width, height);
  }

  // The whole chart, its s = 0 row just above the stem labels and its first stem just right of the filtration
  // labels.
  function fit() {
    view.scale = fitScale();
    view.ox = PAD + DOT * view.scale - chartX(F.min_n) * view.scale;
    view.oy = height - PAD - DOT * view.scale - chartY(0) * view.scale;
  }

  // Fit again whenever the plot's size changes (a resized window, a bar that wraps, a notebook frame that gets its
  // size after the script ran), and draw at once (before the next paint) once there is room to draw in.
  function refit() {
    const size = plot.clientWidth + "x" + plot.clientHeight;
    if (size === lastSize) return;
    lastSize = size;
    layout();
    fit();
    if (width > 0 && height > 0) draw();
  }

  function zoomAt(x, y, factor) {
    const lo = fitScale() / 2, hi = Math.max(8, 2 * fitScale());
    const scale = Math.min(hi, Math.max(lo, view.scale * factor));
    view.ox = x - (x - view.ox) * scale / view.scale;
    view.oy = y - (y - view.oy) * scale / view.scale;
    view.scale = scale;
  }

  // The stems and filtrations whose cells the canvas shows, clipped to the chart.
  function visible() {
    const x0 = -view.ox / view.scale, x1 = (width - view.ox) / view.scale;
    const y0 = -view.oy / view.scale, y1 = (height - view.oy) / view.scale;
    return {
      n0: Math.max(F.min_n, Math.ceil(stemAt(x0) - 0.5)), n1: Math.min(F.max_n, Math.floor(stemAt(x1) + 0.5)),
      s0: Math.max(0, Math.ceil(filtrationAt(y1) - 0.5)), s1: Math.min(F.max_s, Math.floor(filtrationAt(y0) + 0.5)),
    };
  }

  // -- drawing ----------------------------------------------------------------------------------------------
  function schedule() {
    quick = false;
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(frame);
    }
  }

  // A wheel or drag step: a full redraw if the last frame was light, else the snapshot moved, and the full redraw
  // SETTLE_MS after the last moved frame.
  function gesture() {
    if (!snapshot.view) {
      schedule();
      return;
    }
    clearTimeout(settle);
    if (!scheduled) {
      scheduled = quick = true;
      requestAnimationFrame(frame);
    }
  }

  function frame() {
    scheduled = false;
    if (quick) drawSnapshot();
    else draw();
  }

  // The last full frame, moved and scaled from the view it was drawn at to the current one.
  function drawSnapshot() {
    const dpr = window.devicePixelRatio || 1, k = view.scale / snapshot.view.scale;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(k, 0, 0, k, dpr * (view.ox - snapshot.view.ox * k), dpr * (view.oy - snapshot.view.oy * k));
    ctx.drawImage(snapshot.canvas, 0, 0);
    drawAxes(visible());
    stats.quickFrames++;
    settle = setTimeout(schedule, SETTLE_MS);
  }

  function draw() {
    const start = performance.now();
    const dpr = window.devicePixelRatio || 1;
    const P = pages[page];
    const v = visible();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr * view.scale, 0, 0, dpr * view.scale, dpr * view.ox, dpr * view.oy);
    const px = 1 / view.scale;  // one CSS pixel in chart units
    drawGrid(v, px);
    drawUncomputed();
    stats.drawnLines = {};
    stats.dashedLines = 0;
    for (const op of ops) drawLines(P, op, P.lines[op.name], v, px);
    if (P.d2) drawLines(P, D2, P.d2, v, px);
    drawDots(P, v, px);
    drawAxes(v);
    const drawn = stats.drawnDots + Object.values(stats.drawnLines).reduce((a, b) => a + b, 0);
    snapshot.view = drawn > HEAVY ? { ...view } : null;
    if (snapshot.view) {
      [snapshot.canvas.width, snapshot.canvas.height] = [canvas.width, canvas.height];
      snapshot.canvas.getContext("2d").drawImage(canvas, 0, 0);
    }
    stats.lastDraw = performance.now() - start;
    if (stats.firstFrame === null) stats.firstFrame = performance.now();
  }

  function axisStep(pixelsPerUnit, minGap) {
    let step = 1;
    while (step * pixelsPerUnit < minGap) step *= 2;
    return step;
  }

  function drawGrid(v, px) {
    const minor = axisStep(F.grid * view.scale, 6);
    const y0 = chartY(0), y1 = chartY(F.max_s), x0 = chartX(F.min_n), x1 = chartX(F.max_n);
    for (const major of [false, true]) {
      ctx.beginPath();
      for (let n = v.n0; n <= v.n1; n++) {
        if (n % minor === 0 && (n % 4 === 0) === major) {
          ctx.moveTo(chartX(n), y0);
          ctx.lineTo(chartX(n), y1);
        }
      }
      for (let s = v.s0; s <= v.s1; s++) {
        if (s % minor === 0 && (s % 4 === 0) === major) {
          ctx.moveTo(x0, chartY(s));
          ctx.lineTo(x1, chartY(s));
        }
      }
      ctx.strokeStyle = major ? "rgba(0, 0, 0, 0.2)" : "rgba(0, 0, 0, 0.1)";
      ctx.lineWidth = px;
      ctx.stroke();
    }
  }

  // Shade the cells right of each row's last computed stem, as the SVG does: a blank there is not a zero.
  function drawUncomputed() {
    ctx.fillStyle = "rgba(0, 0, 0, 0.06)";
    data.rows.forEach((last, s) => {
      const from = Math.max(last, F.min_n - 1);
      if (from < F.max_n) {
        ctx.fillRect(chartX(from + 0.5), chartY(s + 0.5), chartX(F.max_n + 0.5) - chartX(from + 0.5), F.grid);
      }
    });
  }

  // An operation's lines in two strokes, solid and dashed: dashed are all of a dashed operation's (h2 on the
  // classical page) and, on a motivic page, those whose product is a nonzero power of tau times the target.
  function drawLines(P, op, pairs, v, px) {
    if (!pairs || !pairs.length || hidden.has(op.name)) return;
    const c = P.classes, xyr = P.xyr, powers = P.powers[op.name];
    const inView = (k) => c[3 * k] >= v.n0 - 8 && c[3 * k] <= v.n1 + 8;
    const dashed = (e) => op.dashed || (powers !== undefined && powers[e / 2] > 0);
    let drawn = 0;
    for (const dash of [false, true]) {
      ctx.beginPath();
      for (let e = 0; e < pairs.length; e += 2) {
        const a = pairs[e], b = pairs[e + 1];
        if (dashed(e) !== dash || (!inView(a) && !inView(b))) continue;
        ctx.moveTo(xyr[3 * a], xyr[3 * a + 1]);
        ctx.lineTo(xyr[3 * b], xyr[3 * b + 1]);
        drawn++;
        if (dash) stats.dashedLines++;
      }
      ctx.strokeStyle = op.color;
      ctx.lineWidth = Math.max(px, 0.5);
      ctx.setLineDash(dash ? [4 * Math.max(px, 0.5), 2 * Math.max(px, 0.5)] : []);
      ctx.stroke();
    }
    ctx.setLineDash([]);
    stats.drawnLines[op.name] = drawn;
  }

  function drawDots(P, v, px) {
    const c = P.classes, xyr = P.xyr;
    stats.drawnDots = 0;
    for (const color of P.palette) {  // one fill per colour: black, or each torsion order's on a motivic page
      ctx.beginPath();
      for (let k = 0; k < P.count; k++) {
        const n = c[3 * k], s = c[3 * k + 1];
        if (n < v.n0 - 1 || n > v.n1 + 1 || s < v.s0 - 1 || s > v.s1 + 1) continue;
        if (P.colors && P.colors[k] !== color) continue;
        stats.drawnDots++;
        const r = Math.max(xyr[3 * k + 2], 1.25 * px);
        ctx.moveTo(xyr[3 * k] + r, xyr[3 * k + 1]);
        ctx.arc(xyr[3 * k], xyr[3 * k + 1], r, 0, 2 * Math.PI);
      }
      ctx.fillStyle = color;
      ctx.fill();
    }
    ctx.fillStyle = "#000";
    ctx.font = 8 + "px sans-serif";
    ctx.textBaseline = "middle";
    for (const [key, ks] of P.cells) {
      if (ks.length <= data.max_pattern) continue;
      const k = ks[0];
      ctx.fillText(String(ks.length), xyr[3 * k] + xyr[3 * k + 2] + 1, xyr[3 * k + 1]);
    }
  }

  // Axis labels are DOM elements, so they stay crisp, and they follow the zoom: labels every `step` units.
  function drawAxes(v) {
    const xs = axisStep(F.grid * view.scale, 32), ys = axisStep(F.grid * view.scale, 16);
    placeLabels(xAxis, range(v.n0, v.n1, xs), (n) => ({ left: chartX(n) * view.scale + view.ox + "px" }));
    placeLabels(yAxis, range(v.s0, v.s1, ys), (s) => ({ top: chartY(s) * view.scale + view.oy + "px" }));
  }

  function range(lo, hi, step) {
    const out = [];
    for (let k = Math.ceil(lo / step) * step; k <= hi; k += step) out.push(k);
    return out;
  }

  function placeLabels(axis, values, position) {
    while (axis.children.length < values.length) axis.appendChild(document.createElement("span"));
    while (axis.children.length > values.length) axis.lastChild.remove();
    values.forEach((value, i) => {
      const label = axis.children[i];
      label.textContent = String(value);
      Object.assign(label.style, position(value));
    });
  }

  // -- tooltip ----------------------------------------------------------------------------------------------
  // The classes drawn nearest the pointer (all of a crowded bidegree share one dot), or [] if none is close.
  function hit(x, y) {
    const P = pages[page];
    const cx = (x - view.ox) / view.scale, cy = (y - view.oy) / view.scale;
    const n = Math.round(stemAt(cx)), s = Math.round(filtrationAt(cy));
    let best = [], bestDistance = Infinity;
    for (const k of P.cells.get(n + "," + s) || []) {
      const dx = (P.xyr[3 * k] - cx) * view.scale, dy = (P.xyr[3 * k + 1] - cy) * view.scale;
      const d = Math.hypot(dx, dy);
      const reach = Math.max(P.xyr[3 * k + 2] * view.scale, 1.25) + 5;
      if (d <= reach && d < bestDistance - 1e-9) {
        best = [k];
        bestDistance = d;
      } else if (d <= reach && Math.abs(d - bestDistance) < 1e-9) {
        best.push(k);
      }
    }
    return best;
  }

  const tauPower = (power) => (power === 0 ? "" : power === 1 ? "tau " : "tau^" + power + " ");

  // "op · x = y + z" for op x, reading every target of op on x (each after its power of tau on a motivic page).
  function productLine(P, op, source) {
    const targets = P.out[source].filter(([o]) => o === op);
    return (op === "d2" ? "d2 " : op + " · ") + className(P, source) + " = " +
      targets.map(([, t, power]) => tauPower(power) + className(P, t)).join(" + ");
  }

  function tooltipLines(P, ks) {
    const lines = [];
    for (const k of ks) {
      const seen = new Set();
      for (const [op] of P.out[k]) {
        if (!seen.has(op)) lines.push(productLine(P, op, k));
        seen.add(op);
      }
      for (const [op, source] of P.into[k]) {
        const line = productLine(P, op, source);
        if (!lines.includes(line)) lines.push(line);
      }
    }
    return lines;
  }

  function showTooltip(x, y) {
    const ks = hit(x, y);
    if (!ks.length) {
      tooltip.hidden = true;
      return;
    }
    const P = pages[page];
    const n = P.classes[3 * ks[0]], s = P.classes[3 * ks[0] + 1];
    tooltip.replaceChildren();
    const add = (text, cls) => {
      const div = document.createElement("div");
      div.textContent = text;
      if (cls) div.className = cls;
      tooltip.appendChild(div);
    };
    add(ks.length > 1 ? ks.length + " classes: " + ks.map((k) => className(P, k)).join(", ")
                      : className(P, ks[0]), "name");
    add("stem " + n + ", s = " + s + ", t = " + (n + s) + (pages.length > 1 ? " (" + P.name + ")" : ""), "where");
    if (P.notes) ks.forEach((k) => add(P.notes[k], "where"));
    const lines = tooltipLines(P, ks);
    lines.slice(0, 24).forEach((line) => add(line));
    if (lines.length > 24) add("… " + (lines.length - 24) + " more");
    tooltip.hidden = false;
    const plot = canvas.getBoundingClientRect(), box = canvas.parentElement.getBoundingClientRect();
    let left = x + plot.left - box.left + 14, top = y + plot.top - box.top + 14;
    if (left + tooltip.offsetWidth > box.width) left = Math.max(0, left - tooltip.offsetWidth - 28);
    if (top + tooltip.offsetHeight > box.height) top = Math.max(0, top - tooltip.offsetHeight - 28);
    tooltip.style.left = left + "px";
    tooltip.style.top = top + "px";
  }

  // -- controls ---------------------------------------------------------------------------------------------
  function buildControls() {
    const toggles = document.getElementById("toggles");
    const lineKinds = ops.filter((op) => pages.some((P) => P.lines[op.name] && P.lines[op.name].length));
    if (pages.some((P) => P.d2)) lineKinds.push(D2);
    for (const op of lineKinds) {
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = true;
      box.dataset.op = op.name;
      box.addEventListener("change", () => {
        if (box.checked) hidden.delete(op.name);
        else hidden.add(op.name);
        schedule();
      });
      const swatch = document.createElement("span");
      swatch.className = "swatch" + (op.dashed ? " dashed" : "");
      swatch.style.borderTopColor = op.color;
      label.append(box, swatch, op.name);
      toggles.appendChild(label);
    }
    const legend = document.getElementById("legend");
    for (const entry of data.legend || []) {
      const item = document.createElement("span");
      const dot = document.createElement("span");
      dot.className = "dot";
      dot.style.background = entry.color;
      item.append(dot, entry.name);
      legend.appendChild(item);
    }
    if (data.dashed_note) {
      const item = document.createElement("span");
      const swatch = document.createElement("span");
      swatch.className = "swatch dashed";
      item.append(swatch, data.dashed_note);
      legend.appendChild(item);
    }
    const switcher = document.getElementById("pages");
    if (pages.length > 1) {
      pages.forEach((P, k) => {
        const label = document.createElement("label");
        const radio = document.createElement("input");
        radio.type = "radio";
        radio.name = "page";
        radio.value = P.name;
        radio.checked = k === page;
        radio.addEventListener("change", () => {
          page = k;
          tooltip.hidden = true;
          schedule();
        });
        label.append(radio, P.name);
        switcher.appendChild(label);
      });
    }
    const centre = () => [width / 2, height / 2];
    document.getElementById("zoom-in").addEventListener("click", () => {
      zoomAt(...centre(), 1.5);
      schedule();
    });
    document.getElementById("zoom-out").addEventListener("click", () => {
      zoomAt(...centre(), 1 / 1.5);
      schedule();
    });
    document.getElementById("zoom-fit").addEventListener("click", () => {
      fit();
      schedule();
    });
  }

  function local(event) {
    const rect = canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    const unit = event.deltaMode === 1 ? 0.05 : event.deltaMode === 2 ? 1 : 0.0015;
    zoomAt(...local(event), Math.exp(-event.deltaY * unit));
    gesture();
    tooltip.hidden = true;
  }, { passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    drag = { x: event.clientX, y: event.clientY };
    canvas.setPointerCapture(event.pointerId);
    canvas.classList.add("dragging");
    tooltip.hidden = true;
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!drag) {
      showTooltip(...local(event));
      return;
    }
    view.ox += event.clientX - drag.x;
    view.oy += event.clientY - drag.y;
    drag = { x: event.clientX, y: event.clientY };
    gesture();
  });
  const endDrag = () => {
    drag = null;
    canvas.classList.remove("dragging");
  };
  canvas.addEventListener("pointerup", endDrag);
  canvas.addEventListener("pointercancel", endDrag);
  canvas.addEventListener("pointerleave", () => { tooltip.hidden = true; });
  new ResizeObserver(refit).observe(plot);

  // Read by the tests and the benchmark: the view, what the last frame drew, and when the first one was drawn.
  window.nassauChart = {
    view: () => ({ ...view }),
    visibleStems: () => { const v = visible(); return [v.n0, v.n1]; },
    page: () => pages[page].name,
    stats,
  };

  buildControls();
  refit();
})();
