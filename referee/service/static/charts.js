// Small line charts on a canvas for the play page's analysis: axes with a few round ticks, one
// polyline with dots per series, a legend. Plain JS, no library: the service serves every asset.
"use strict";

(function () {
  // Round tick values covering [lo, hi], about `count` of them.
  function ticks(lo, hi, count) {
    if (hi <= lo) hi = lo + 1;
    const raw = (hi - lo) / count, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
    return out;
  }

  const fmt = (v) => (Math.abs(v) >= 10000 ? `${Math.round(v / 1000)}k` : `${+v.toFixed(2)}`);

  // Draw `series` ([{label, colour, points: [[x, y], ...]}]) on `canvas`, titled `title`, with axis
  // names `xName` / `yName`. Returns what it drew (the scale and the points in pixels), for tests.
  function lineChart(canvas, { title, xName, yName, series }) {
    const dpr = window.devicePixelRatio || 1, W = canvas.clientWidth || 340, H = canvas.clientHeight || 170;
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    const g = canvas.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
    const L = 44, R = 10, T = 34, B = 30, pw = W - L - R, ph = H - T - B;
    g.fillStyle = "#333"; g.font = "600 12px system-ui, sans-serif"; g.textBaseline = "alphabetic";
    g.fillText(title, L, 14);
    const pts = series.flatMap((s) => s.points);
    const drawn = { series: [] };
    if (!pts.length) {
      g.fillStyle = "#999"; g.font = "12px system-ui, sans-serif";
      g.fillText("no solved tiles yet", L + 8, T + ph / 2);
      return drawn;
    }
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(0, ...ys), y1 = Math.max(...ys);
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    if (y1 === y0) y1 = y0 + 1;
    const xt = ticks(x0, x1, 5), yt = ticks(y0, y1, 4);
    x0 = Math.min(x0, xt[0]); x1 = Math.max(x1, xt[xt.length - 1]);
    y0 = Math.min(y0, yt[0]); y1 = Math.max(y1, yt[yt.length - 1]);
    const px = (x) => L + ((x - x0) / (x1 - x0)) * pw, py = (y) => T + ph - ((y - y0) / (y1 - y0)) * ph;
    g.font = "10px system-ui, sans-serif"; g.strokeStyle = "#e4e1da"; g.lineWidth = 1; g.fillStyle = "#666";
    g.textAlign = "right"; g.textBaseline = "middle";
    for (const v of yt) { g.beginPath(); g.moveTo(L, py(v)); g.lineTo(L + pw, py(v)); g.stroke(); g.fillText(fmt(v), L - 4, py(v)); }
    g.textAlign = "center"; g.textBaseline = "top";
    for (const v of xt) g.fillText(fmt(v), px(v), T + ph + 4);
    g.strokeStyle = "#888"; g.beginPath(); g.moveTo(L, T); g.lineTo(L, T + ph); g.lineTo(L + pw, T + ph); g.stroke();
    g.fillStyle = "#666"; g.textAlign = "right"; g.textBaseline = "bottom"; g.fillText(xName, L + pw, H - 1);
    g.save(); g.translate(10, T + ph / 2); g.rotate(-Math.PI / 2); g.textAlign = "center"; g.textBaseline = "top";
    g.fillText(yName, 0, -6); g.restore();
    let lx = L;                                     // the legend: a row under the title
    g.textAlign = "left"; g.textBaseline = "alphabetic"; g.font = "11px system-ui, sans-serif";
    for (const s of series) {
      g.fillStyle = s.colour; g.fillRect(lx, 20, 10, 8);
      g.fillStyle = "#444"; g.fillText(s.label, lx + 14, 28);
      lx += g.measureText(s.label).width + 28;
    }
    for (const s of series) {
      const at = s.points.map(([x, y]) => [px(x), py(y)]);
      g.strokeStyle = s.colour; g.fillStyle = s.colour; g.lineWidth = 2;
      g.beginPath(); at.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y))); g.stroke();
      for (const [x, y] of at) { g.beginPath(); g.arc(x, y, 3, 0, 2 * Math.PI); g.fill(); }
      drawn.series.push({ label: s.label, colour: s.colour, points: s.points, pixels: at });
    }
    drawn.x = [x0, x1]; drawn.y = [y0, y1];
    return drawn;
  }

  window.tilesCharts = { lineChart, ticks };
})();
