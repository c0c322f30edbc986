// The play page of `tiles referee serve`: draws a day's board on a canvas (pan, zoom down to cells;
// a mouse, a pen or fingers through touch.js), shows a clicked tile's puzzle in board position, lets a
// person fill it and submit through the API, and shows the day's leaderboard with the analyzer's two
// charts (charts.js). On a laptop the panel is beside the board, on a phone below it (style.css).
// Plain JS, no build step; every number it shows comes from /api/v1.
"use strict";

const API = "/api/v1";
const HUES = [[0xE6, 0x6B, 0x5B], [0xF2, 0xB1, 0x4C], [0x9C, 0xC9, 0x5A], [0x4F, 0xB3, 0xA9],
              [0x5B, 0x8F, 0xDB], [0x9B, 0x7B, 0xD4], [0xE0, 0x82, 0xC0]];
const SEAM = [0x8A, 0x80, 0x76], ZONE = [0xBD, 0xBD, 0xBD];
const CLUE0 = [0xFF, 0xD8, 0x20], CLUE1 = [0xD8, 0x10, 0x10];
const $ = (id) => document.getElementById(id);
const mix = (c, w, t) => c.map((a, i) => Math.round(a * (1 - t) + w[i] * t));

const S = {
  day: null, board: null, G: 0, base: null, tileAt: null, givens: null, values: null,
  run: null, token: null, chartRun: null, charts: null, chartSpecs: null, bucket: null, solved: new Set(), frontier: new Set(), solvedCells: new Map(),
  view: { s: 1, ox: 0, oy: 0 }, sel: null, puzzle: null, entry: null, cells: [], dirty: true,
};
// Motion only for those who have not asked for less (prefers-reduced-motion).
const calm = window.matchMedia("(prefers-reduced-motion: reduce)");
const motion = () => (calm.matches ? "auto" : "smooth");

async function api(path, opts = {}) {
  const res = await fetch(API + path, opts);
  const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
  return body;
}

function bits(b64, count) {
  const raw = atob(b64), out = new Uint8Array(count);
  for (let i = 0; i < count; i++) out[i] = (raw.charCodeAt(i >> 3) >> (7 - (i & 7))) & 1;
  return out;
}

// ------------------------------------------------------------------ loading a day

async function loadDay(day) {
  const [board, cells] = await Promise.all([api(`/days/${day}`), api(`/days/${day}/cells`)]);
  S.day = day; S.board = board; S.G = board.G;
  S.givens = bits(cells.givens, S.G * S.G); S.values = bits(cells.values, S.G * S.G);
  buildBase();
  S.sel = null; S.puzzle = null;
  showTile(null);
  fit();
  const saved = JSON.parse(localStorage.getItem(`tiles-run-${day}`) || "null");
  S.run = null; S.token = null; S.solved = new Set(); S.frontier = new Set(); S.solvedCells = new Map();
  if (saved) {
    try { S.run = saved.run; S.token = saved.token; await refreshRun(); }
    catch (e) { S.run = null; S.token = null; localStorage.removeItem(`tiles-run-${day}`); }
  }
  updateRunInfo();
  S.chartRun = null;
  S.dirty = true;
  refreshAnalysis().catch(() => {});
}

// One pixel per cell: tile hues (pale for a given 0, dark for a given 1), seams neutral, zones grey,
// clues yellow / red. tileAt maps a cell to the tile a click there means (interiors win over seams).
function buildBase() {
  const G = S.G, tiles = S.board.tiles, owners = new Uint8Array(G * G), hue = new Int8Array(G * G);
  S.tileAt = new Int32Array(G * G).fill(-1);
  for (const t of tiles) {
    for (let r = t.y0; r < t.y0 + t.n; r++) for (let c = t.x0; c < t.x0 + t.n; c++) {
      const k = r * G + c; owners[k]++; hue[k] = t.colour; if (S.tileAt[k] < 0) S.tileAt[k] = t.id;
    }
  }
  for (const t of tiles) {
    for (let r = t.y0 + 1; r < t.y0 + t.n - 1; r++) for (let c = t.x0 + 1; c < t.x0 + t.n - 1; c++) S.tileAt[r * G + c] = t.id;
  }
  const pal = HUES.map((h) => [mix(h, [255, 255, 255], 0.35), mix(h, [255, 255, 255], 0.82), mix(h, [0, 0, 0], 0.55)]);
  const seam = [mix(SEAM, [255, 255, 255], 0.45), mix(SEAM, [255, 255, 255], 0.85), mix(SEAM, [0, 0, 0], 0.6)];
  // two pictures: with givens (zoomed in) and hues only (zoomed out, where givens would be noise)
  const paint = (withGivens) => {
    const canvas = document.createElement("canvas");
    canvas.width = G; canvas.height = G;
    const ctx = canvas.getContext("2d"), img = ctx.createImageData(G, G), d = img.data;
    for (let k = 0; k < G * G; k++) {
      let c;
      if (owners[k] === 0) c = ZONE;
      else {
        const level = withGivens && S.givens[k] ? (S.values[k] ? 2 : 1) : 0;
        c = owners[k] >= 2 ? (withGivens ? seam[level] : pal[hue[k]][2]) : pal[hue[k]][level];
      }
      d[4 * k] = c[0]; d[4 * k + 1] = c[1]; d[4 * k + 2] = c[2]; d[4 * k + 3] = 255;
    }
    for (const [r, c, v] of S.board.clues) {
      const k = r * G + c, col = v ? CLUE1 : CLUE0;
      d[4 * k] = col[0]; d[4 * k + 1] = col[1]; d[4 * k + 2] = col[2];
    }
    ctx.putImageData(img, 0, 0);
    return canvas;
  };
  S.base = paint(true);
  S.baseHue = paint(false);
}

// ------------------------------------------------------------------ the view

const cv = $("board"), ctx = cv.getContext("2d");
const narrow = window.matchMedia("(max-width: 700px)");   // the phone layout of style.css

function resize() {
  const dpr = window.devicePixelRatio || 1, r = cv.getBoundingClientRect();
  cv.width = Math.round(r.width * dpr); cv.height = Math.round(r.height * dpr);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  S.dirty = true;
  sizeGrid();
  drawCharts();
}

function fit() {
  const r = cv.getBoundingClientRect(), s = Math.min(r.width, r.height) / (S.G + 2);
  S.view = { s, ox: (r.width - S.G * s) / 2, oy: (r.height - S.G * s) / 2 };
  S.dirty = true;
}

function zoomAt(px, py, f) {
  const v = S.view, r = cv.getBoundingClientRect();
  const min = Math.min(r.width, r.height) / (S.G + 2) / 2, s = Math.max(min, Math.min(64, v.s * f));
  v.ox = px - (px - v.ox) * (s / v.s); v.oy = py - (py - v.oy) * (s / v.s); v.s = s;
  S.dirty = true;
}

// Centre tile `id`, zoomed in: to 45% of the board's side; on a phone to 85%, at most 24 px a cell (a
// board one screen wide has room for little else, and digits are drawn only from 14 px a cell).
function focusTile(id) {
  const t = S.board.tiles[id], r = cv.getBoundingClientRect(), side = Math.min(r.width, r.height);
  const s = narrow.matches ? Math.min(24, side * 0.85 / t.n) : Math.min(48, side * 0.45 / t.n);
  S.view = { s, ox: r.width / 2 - (t.x0 + t.n / 2) * s, oy: r.height / 2 - (t.y0 + t.n / 2) * s };
  S.dirty = true;
}

function cellAt(px, py) {
  const v = S.view, c = Math.floor((px - v.ox) / v.s), r = Math.floor((py - v.oy) / v.s);
  return r >= 0 && c >= 0 && r < S.G && c < S.G ? [r, c] : null;
}

function draw() {
  if (!S.board) return;
  const v = S.view, s = v.s, W = cv.clientWidth, H = cv.clientHeight, G = S.G;
  ctx.clearRect(0, 0, W, H);
  const c0 = Math.max(0, Math.floor(-v.ox / s)), r0 = Math.max(0, Math.floor(-v.oy / s));
  const c1 = Math.min(G, Math.ceil((W - v.ox) / s)), r1 = Math.min(G, Math.ceil((H - v.oy) / s));
  if (c1 <= c0 || r1 <= r0) return;
  ctx.imageSmoothingEnabled = s < 2;
  ctx.drawImage(s < 2 ? S.baseHue : S.base, c0, r0, c1 - c0, r1 - r0, v.ox + c0 * s, v.oy + r0 * s,
                (c1 - c0) * s, (r1 - r0) * s);
  const X = (c) => v.ox + c * s, Y = (r) => v.oy + r * s;
  const visible = S.board.tiles.filter((t) => t.x0 < c1 && t.x0 + t.n > c0 && t.y0 < r1 && t.y0 + t.n > r0);
  if (s >= 6) {                                       // the cell grid
    ctx.strokeStyle = "rgba(0,0,0,0.12)"; ctx.lineWidth = 1; ctx.beginPath();
    for (let c = c0; c <= c1; c++) { ctx.moveTo(X(c), Y(r0)); ctx.lineTo(X(c), Y(r1)); }
    for (let r = r0; r <= r1; r++) { ctx.moveTo(X(c0), Y(r)); ctx.lineTo(X(c1), Y(r)); }
    ctx.stroke();
  }
  if (s >= 1.5) {                                     // tile outlines through the seam cells' centres
    ctx.strokeStyle = "rgba(40,30,20,0.55)"; ctx.lineWidth = s >= 6 ? 1.5 : 1; ctx.beginPath();
    for (const t of visible) ctx.rect(X(t.x0 + 0.5), Y(t.y0 + 0.5), (t.n - 1) * s, (t.n - 1) * s);
    ctx.stroke();
  }
  for (const t of visible) {                          // solved tiles
    if (!S.solved.has(t.id)) continue;
    ctx.fillStyle = "rgba(235,250,238,0.55)"; ctx.fillRect(X(t.x0), Y(t.y0), t.n * s, t.n * s);
    ctx.strokeStyle = "#1f9d55"; ctx.lineWidth = Math.max(1, Math.min(3, s / 3));
    ctx.strokeRect(X(t.x0) + 1, Y(t.y0) + 1, t.n * s - 2, t.n * s - 2);
    if (t.n * s >= 18 && s < 14) {
      ctx.fillStyle = "#1f9d55"; ctx.font = `bold ${Math.min(40, t.n * s * 0.5)}px system-ui`;
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      ctx.fillText("✓", X(t.x0 + t.n / 2), Y(t.y0 + t.n / 2));
    }
  }
  if (s >= 14) drawValues(r0, r1, c0, c1, X, Y);
  ctx.setLineDash([Math.max(2, s), Math.max(2, s / 2)]);
  for (const t of visible) {                          // playable tiles
    if (!S.frontier.has(t.id)) continue;
    ctx.strokeStyle = "#e0a800"; ctx.lineWidth = Math.max(1.5, Math.min(3, s / 2));
    ctx.strokeRect(X(t.x0) + 1, Y(t.y0) + 1, t.n * s - 2, t.n * s - 2);
  }
  ctx.setLineDash([]);
  const seed = S.board.tiles[S.board.seed_tile];      // the seed tile, framed in black
  ctx.strokeStyle = "#111"; ctx.lineWidth = Math.max(2, Math.min(4, s));
  ctx.strokeRect(X(seed.x0) - 1, Y(seed.y0) - 1, seed.n * s + 2, seed.n * s + 2);
  if (S.sel !== null) {
    const t = S.board.tiles[S.sel];
    ctx.strokeStyle = "#1e5fd0"; ctx.lineWidth = 3;
    ctx.strokeRect(X(t.x0) - 3, Y(t.y0) - 3, t.n * s + 6, t.n * s + 6);
  }
  for (const [r, c] of S.board.clues) {               // clue rings, findable at any zoom
    if (r < r0 - 2 || r > r1 + 2 || c < c0 - 2 || c > c1 + 2) continue;
    ctx.strokeStyle = "#d81010"; ctx.lineWidth = 2;
    const rad = Math.max(5, s * 1.2);
    ctx.beginPath(); ctx.arc(X(c + 0.5), Y(r + 0.5), rad, 0, 2 * Math.PI); ctx.stroke();
  }
  if (s >= 3) {                                       // tile ids
    ctx.font = `${Math.max(9, Math.min(13, s * 0.9))}px system-ui`; ctx.textAlign = "left"; ctx.textBaseline = "top";
    for (const t of visible) {
      if (t.n * s < 40) continue;
      ctx.fillStyle = "rgba(255,255,255,0.75)";
      const label = `#${t.id}`, w = ctx.measureText(label).width + 4;
      ctx.fillRect(X(t.x0 + 1), Y(t.y0 + 1), w, 14); ctx.fillStyle = "#222";
      ctx.fillText(label, X(t.x0 + 1) + 2, Y(t.y0 + 1) + 1);
    }
  }
}

function drawValues(r0, r1, c0, c1, X, Y) {
  const s = S.view.s, G = S.G;
  ctx.font = `600 ${Math.round(s * 0.55)}px ui-monospace, monospace`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
  for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) {
    const k = r * G + c;
    if (!S.givens[k]) continue;
    ctx.fillStyle = S.values[k] ? "#fff" : "#333";
    ctx.fillText(S.values[k] ? "1" : "0", X(c + 0.5), Y(r + 0.5));
  }
  ctx.fillStyle = "#0a7d3b";
  for (const [id, cells] of S.solvedCells) {
    const t = S.board.tiles[id];
    for (let i = 0; i < t.n * t.n; i++) {
      const r = t.y0 + Math.floor(i / t.n), c = t.x0 + (i % t.n);
      if (r < r0 || r >= r1 || c < c0 || c >= c1 || S.givens[r * G + c]) continue;
      ctx.fillText(cells[i], X(c + 0.5), Y(r + 0.5));
    }
  }
}

function frame() { if (S.dirty) { S.dirty = false; draw(); } requestAnimationFrame(frame); }

// ------------------------------------------------------------------ pointer

// Pan, pinch and tap (touch.js): the same gestures for a mouse, a pen and fingers.
function showCell(px, py) {
  const cell = S.board && cellAt(px, py);
  if (!cell) return null;
  const id = S.tileAt[cell[0] * S.G + cell[1]];
  $("status").textContent = `row ${cell[0]}, col ${cell[1]}` + (id >= 0 ? ` · tile #${id} (n=${S.board.tiles[id].n})` : " · zone")
    + ` · ${S.view.s.toFixed(1)} px/cell`;
  return id;
}
tilesGestures.attach(cv, {
  pan(dx, dy) { S.view.ox += dx; S.view.oy += dy; S.dirty = true; },
  zoom: zoomAt,
  hover: showCell,
  tap(px, py) { const id = showCell(px, py); if (id !== null && id >= 0) openTile(id, true); },
});
cv.addEventListener("wheel", (e) => { e.preventDefault(); zoomAt(e.offsetX, e.offsetY, Math.pow(1.0015, -e.deltaY)); }, { passive: false });
$("zin").onclick = () => zoomAt(cv.clientWidth / 2, cv.clientHeight / 2, 1.6);
$("zout").onclick = () => zoomAt(cv.clientWidth / 2, cv.clientHeight / 2, 1 / 1.6);
$("zfit").onclick = fit;
$("zseed").onclick = () => { focusTile(S.board.seed_tile); openTile(S.board.seed_tile); };
window.addEventListener("resize", resize);

// ------------------------------------------------------------------ keyboard on the board

// The tiles the arrows move between: the playable ones during a run, every tile before one.
function candidates() { return S.run ? [...S.frontier] : S.board.tiles.map((t) => t.id); }

// The first tile the board's keys select: the seed tile before a run and at its start, else the
// lowest-numbered playable tile.
function firstTile() {
  const c = candidates();
  if (!S.run || c.includes(S.board.seed_tile)) return S.board.seed_tile;
  return c.length ? Math.min(...c) : S.board.seed_tile;
}

// The nearest candidate tile in direction (dx, dy) from tile `from`, by centres: distance along the
// arrow plus twice the distance across it (a tile straight ahead wins over a nearer one off to the
// side); null when none lies that way.
function nextTile(from, dx, dy) {
  const t0 = S.board.tiles[from], cx = t0.x0 + t0.n / 2, cy = t0.y0 + t0.n / 2;
  let best = null, score = Infinity;
  for (const id of candidates()) {
    if (id === from) continue;
    const t = S.board.tiles[id], vx = t.x0 + t.n / 2 - cx, vy = t.y0 + t.n / 2 - cy;
    const along = vx * dx + vy * dy, across = Math.abs(vx * dy - vy * dx);
    if (along <= 0) continue;
    if (along + 2 * across < score) { score = along + 2 * across; best = id; }
  }
  return best;
}

function tileState(id) {
  if (S.solved.has(id)) return "solved";
  if (S.frontier.has(id)) return "playable";
  return S.run ? "locked" : "start a run to play";
}

// Say which tile the board's keys have selected (a live region the board is described by).
function announceTile(id) {
  if (id === null || !S.board) return;
  const t = S.board.tiles[id];
  $("boardsel").textContent = `Tile ${id}${id === S.board.seed_tile ? " (the seed tile)" : ""}, ${t.n} by ${t.n}, `
    + `rows ${t.y0} to ${t.y0 + t.n - 1}, columns ${t.x0} to ${t.x0 + t.n - 1}: ${tileState(id)}. Enter opens it.`;
}

// Select tile `id` for the board's keys; `pan`: centre the view on it (not when the focus came from a
// pointer, whose tap must land where it was aimed).
function selectTile(id, pan = true) { S.sel = id; S.dirty = true; if (pan) focusTile(id); announceTile(id); }

cv.addEventListener("focus", () => { if (S.board) { if (S.sel === null) selectTile(firstTile(), false); else announceTile(S.sel); } });
cv.addEventListener("keydown", async (e) => {
  if (!S.board) return;
  const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  if (e.key in dirs) {
    e.preventDefault();
    const id = S.sel === null ? firstTile() : nextTile(S.sel, ...dirs[e.key]);
    if (id === null) $("boardsel").textContent = `No ${S.run ? "playable " : ""}tile that way.`;
    else selectTile(id);
  } else if (e.key === "Enter" || e.key === " ") {
    e.preventDefault();
    const id = S.sel === null ? firstTile() : S.sel;
    await openTile(id, true);
    if (S.puzzle && S.puzzle.tile === id) S.cells.find((el) => el.tabIndex === 0).focus();
  } else if (e.key === "+" || e.key === "=") { zoomAt(cv.clientWidth / 2, cv.clientHeight / 2, 1.6); }
  else if (e.key === "-") { zoomAt(cv.clientWidth / 2, cv.clientHeight / 2, 1 / 1.6); }
  else if (e.key === "0") { fit(); }
});

// ------------------------------------------------------------------ runs

function saveRun() { localStorage.setItem(`tiles-run-${S.day}`, JSON.stringify({ run: S.run, token: S.token })); }

async function refreshRun() {
  const [score, fr] = await Promise.all([api(`/runs/${S.run}`), api(`/runs/${S.run}/frontier`)]);
  S.solved = new Set(fr.solved); S.frontier = new Set(fr.tiles);
  showScore(score);
  S.dirty = true;
}

function showScore(score) {
  $("reward").textContent = score.reward; $("solved").textContent = score.solved; $("playable").textContent = score.frontier;
  const chips = $("frontier"); chips.textContent = "";
  const ids = [...S.frontier].sort((a, b) => a - b);
  if (!ids.length) chips.textContent = S.run ? "nothing left: the board is solved" : "—";
  for (const id of ids.slice(0, 80)) {
    const b = document.createElement("button");
    const n = S.board.tiles[id].n, more = document.createElement("span");
    more.className = "sr-only"; more.textContent = `: tile ${id}, ${n} by ${n}, playable`;
    b.textContent = `#${id} · n${n}`; b.appendChild(more);
    b.onclick = () => { focusTile(id); openTile(id, true); };
    chips.appendChild(b);
  }
  if (ids.length > 80) chips.appendChild(document.createTextNode(` +${ids.length - 80} more`));
}

function updateRunInfo() {
  $("runinfo").textContent = S.run ? `run ${S.run}` : "no run: start one to play";
  if (!S.run) showScore({ reward: 0, solved: 0, frontier: 0 });
}

$("newrun").onclick = async () => {
  try {
    const player = $("player").value.trim();
    const r = await api(`/days/${S.day}/runs`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(player ? { player } : {}) });
    S.run = r.run; S.token = r.token; S.solvedCells = new Map(); saveRun();
    await refreshRun(); updateRunInfo();
    S.chartRun = null; refreshAnalysis().catch(() => {});
    if (S.sel !== null) openTile(S.sel);
    setVerdict(`New run ${r.run}. Start with the seed tile #${S.board.seed_tile} (black frame).`, "ok");
  } catch (e) { setVerdict(e.message, "bad"); }
};

// ------------------------------------------------------------------ leaderboard and analysis

const RUN_COLOUR = "#3d7be0", DAY_COLOUR = "#e0a800";

// The day's leaderboard and two charts: reward per batch, and mean n of the tiles solved over time,
// each for the charted run (the page's own, or a leaderboard row clicked) and for the whole day.
async function refreshAnalysis() {
  const day = S.day;
  if (!day) return;
  const run = S.chartRun || S.run;
  const lb = await api(`/days/${day}/leaderboard?limit=10&by=${encodeURIComponent($("leaderby").value)}`);
  const bucket = S.bucket = bucketFor(lb.runs);
  const [da, ra] = await Promise.all([api(`/days/${day}/analysis?bucket=${bucket}`),
    run ? api(`/runs/${run}/analysis`) : null]);
  if (day !== S.day) return;
  $("bucket").textContent = `${bucket} s`;
  showLeaders(lb.runs, run);
  $("chartrun").textContent = run ? `· run ${run}${run === S.run ? " (yours)" : ""}` : "· the day";
  const rb = ra ? ra.batches : [], named = run ? "this run" : null;
  const both = (runPts, dayPts, dayLabel) => [{ label: dayLabel, colour: DAY_COLOUR, points: dayPts },
    ...(named ? [{ label: named, colour: RUN_COLOUR, points: runPts }] : [])];
  S.chartSpecs = {
    reward: { title: "Reward per batch", xName: "batch", yName: "reward",
      series: both(rb.map((b) => [b.batch, b.reward]), da.batches.map((b) => [b.batch, b.mean_reward]),
                   "day (mean of runs)") },
    meanN: { title: "Mean n of solved tiles over time", xName: "seconds since start", yName: "mean n",
      series: both(rb.filter((b) => b.mean_n !== null).map((b) => [b.t, b.mean_n]),
                   da.time.filter((b) => b.mean_n !== null).map((b) => [b.t, b.mean_n]), "day") },
  };
  drawCharts();
  window.tilesPlay.analysed += 1;
}

// The two charts as wide as their column is now (again after a resize: a phone turned).
function drawCharts() {
  const c = S.chartSpecs;
  if (!c) return;
  S.charts = { reward: tilesCharts.lineChart($("chartreward"), c.reward), meanN: tilesCharts.lineChart($("chartmeann"), c.meanN) };
  chartTables(c);
}

// The charts' text alternative: each series as a table of the points drawn.
function chartTables(specs) {
  const out = $("charttables"); out.textContent = "";
  for (const spec of [specs.reward, specs.meanN]) {
    for (const ser of spec.series) {
      const t = document.createElement("table"), cap = t.createCaption(), head = t.createTHead().insertRow();
      t.className = "data"; cap.textContent = `${spec.title}: ${ser.label}`;
      for (const name of [spec.xName, spec.yName]) {
        const th = document.createElement("th"); th.scope = "col"; th.textContent = name; head.appendChild(th);
      }
      const body = t.createTBody();
      if (!ser.points.length) body.insertRow().insertCell().textContent = "no points yet";
      for (const [x, y] of ser.points) {
        const row = body.insertRow();
        row.insertCell().textContent = Number.isInteger(x) ? x : x.toFixed(1);
        row.insertCell().textContent = Number.isInteger(y) ? y : y.toFixed(2);
      }
      out.appendChild(t);
    }
  }
}

// The width of the day chart's time buckets: about 30 buckets over the time the runs have played.
function bucketFor(rows) {
  if (!rows.length) return 60;
  const span = Date.now() / 1000 - Math.min(...rows.map((r) => r.created));
  return Math.min(86400, Math.max(1, Math.ceil(span / 30)));
}

function showLeaders(rows, charted) {
  const body = $("leaders").tBodies[0];
  body.textContent = "";
  if (!rows.length) { body.innerHTML = '<tr><td colspan="8" class="muted">no runs yet</td></tr>'; return; }
  for (const r of rows) {
    const tr = document.createElement("tr");
    for (const v of [r.rank, r.player === null ? `anonymous ${r.run.slice(0, 7)}` : r.player, r.reward, r.solved, r.moves,
                     r.batches, r.requests, r.time === null ? "—" : `${r.time.toFixed(1)} s`]) {
      const td = document.createElement("td"); td.textContent = v; td.title = String(v); tr.appendChild(td);
    }
    tr.classList.toggle("mine", r.run === S.run);
    tr.classList.toggle("charted", r.run === charted);
    tr.title = `run ${r.run}: click to chart it`;
    tr.onclick = () => { S.chartRun = r.run === S.run ? null : r.run; refreshAnalysis().catch(() => {}); };
    tr.tabIndex = 0;   // a keyboard charts a row too
    tr.onkeydown = (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); tr.onclick(); } };
    body.appendChild(tr);
  }
}

setInterval(() => { if (!document.hidden) refreshAnalysis().catch(() => {}); }, 15000);
$("leaderby").onchange = () => { refreshAnalysis().catch(() => {}); };

// ------------------------------------------------------------------ the puzzle panel

function setVerdict(text, cls) { const v = $("verdict"); v.textContent = text; v.className = cls || ""; }

// Show tile `id`'s puzzle; `reveal`: on a phone, scroll the page down to it (the panel is below the board).
async function openTile(id, reveal = false) {
  S.sel = id; S.dirty = true;
  try {
    const p = await api(S.run ? `/runs/${S.run}/tiles/${id}` : `/days/${S.day}/tiles/${id}`);
    if (S.sel !== id) return;
    S.puzzle = p; S.entry = p.puzzle.split("");
    if (p.solved && S.solvedCells.has(id)) S.entry = S.solvedCells.get(id).split("");
    showTile(p);
    if (reveal && narrow.matches) $("tilepanel").scrollIntoView({ block: "start", behavior: motion() });
  } catch (e) { setVerdict(e.message, "bad"); }
}

// The puzzle's cells on a phone: as large as the panel's width allows, at most 44 px (a fingertip);
// 40 px or more up to n = 8 on a 360 px wide screen, about 20 px for n = 16. Wider screens keep
// style.css's 20 px (26 px up to n = 10), which ignores --cell.
function sizeGrid() {
  const n = S.puzzle ? S.puzzle.n : 0;
  if (!n) return;
  const room = $("tilepanel").clientWidth - 4 - (n - 1);      // less the grid's 2 px border and 1 px gaps
  $("grid").style.setProperty("--cell", `${Math.max(16, Math.min(44, Math.floor(room / n)))}px`);
}

function showTile(p) {
  const grid = $("grid"); grid.textContent = ""; S.cells = [];
  $("actions").hidden = !p;
  if (!p) { $("tiletitle").textContent = "Pick a tile"; return; }
  const state = p.solved ? "solved ✓" : p.playable ? "playable" : S.run ? "locked: solve a neighbour first" : "start a run to play";
  $("tiletitle").textContent = `Tile #${p.tile} · ${p.n}×${p.n}${p.seed ? " · seed" : ""} · ${state}`;
  $("tilehint").textContent = `Board cells rows ${p.y0}–${p.y0 + p.n - 1}, cols ${p.x0}–${p.x0 + p.n - 1}. `
    + `Reward ${p.n * p.n}. Neighbours: ${p.neighbours.map((n) => "#" + n).join(" ")}`;
  grid.className = p.n <= 10 ? "big" : "";
  grid.setAttribute("aria-rowcount", p.n); grid.setAttribute("aria-colcount", p.n);
  sizeGrid();
  const clue = new Set(p.clues.map(([r, c]) => `${r - p.y0},${c - p.x0}`));
  // rows of cells (a grid's rows, for a screen reader); one cell at a time is in the tab order
  for (let r = 0; r < p.n; r++) {
    const row = document.createElement("div");
    row.className = "row"; row.setAttribute("role", "row");
    for (let c = 0; c < p.n; c++) {
      const i = r * p.n + c, el = document.createElement("div");
      el.className = "c"; el.dataset.r = r; el.dataset.c = c; el.dataset.i = i; el.tabIndex = -1;
      el.setAttribute("role", "gridcell");
      if (p.puzzle[i] !== ".") { el.classList.add("fixed"); el.setAttribute("aria-readonly", "true"); }
      if (p.known[i] === "1") el.classList.add("known");
      if (p.zone[i] === "1") el.classList.add("zone");
      if (clue.has(`${r},${c}`)) el.classList.add("clue");
      el.addEventListener("click", () => cycle(i, 1));
      el.addEventListener("contextmenu", (e) => { e.preventDefault(); cycle(i, -1); });
      el.addEventListener("keydown", (e) => key(e, i));
      el.addEventListener("focus", () => rove(i));
      row.appendChild(el); S.cells.push(el);
    }
    grid.appendChild(row);
  }
  const first = p.puzzle.indexOf(".");
  S.cells[first >= 0 ? first : 0].tabIndex = 0;
  renderEntry();
  setVerdict("");
}

function cycle(i, dir) {
  const p = S.puzzle;
  if (!p || p.puzzle[i] !== "." || p.solved) return;
  const order = [".", "0", "1"], k = order.indexOf(S.entry[i]);
  S.entry[i] = order[(k + dir + 3) % 3];
  renderEntry();
}

// The one cell of the puzzle in the tab order is the one last focused (a roving tabindex).
function rove(i) { for (const el of S.cells) el.tabIndex = -1; S.cells[i].tabIndex = 0; }

function key(e, i) {
  const p = S.puzzle, n = p.n, moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -n, ArrowDown: n };
  if (e.key in moves) {
    const j = i + moves[e.key];
    if (j >= 0 && j < n * n) S.cells[j].focus();
    e.preventDefault(); return;
  }
  if (e.key === "Escape") { e.preventDefault(); leaveTile(); return; }
  if (e.key === "Enter") { e.preventDefault(); if (!$("submit").disabled) $("submit").click(); return; }
  if (p.puzzle[i] !== "." || p.solved) return;
  const v = { "0": "0", "1": "1", " ": ".", Backspace: ".", Delete: "." }[e.key];
  if (v === undefined) return;
  e.preventDefault(); S.entry[i] = v; renderEntry();
  if (v !== "." && i + 1 < n * n) S.cells[i + 1].focus();
}

// Escape: back to the board, the tile still selected there.
function leaveTile() { cv.focus(); announceTile(S.sel); }

// What a screen reader says for cell i: its place, its value, and what kind of cell it is.
function cellName(p, i, v, bad) {
  const r = Math.floor(i / p.n) + 1, c = (i % p.n) + 1;
  const kind = p.puzzle[i] !== "." ? ", given" : p.known[i] === "1" ? ", known from a solved neighbour" : "";
  return `row ${r}, column ${c}: ${v === "." ? "empty" : v}${kind}${bad ? ", breaks a rule" : ""}`;
}

// Rows and columns that break a Takuzu rule (three alike in a line, more than n/2 of one value).
function badCells(e, n) {
  const bad = new Set(), at = (r, c) => e[r * n + c];
  for (let d = 0; d < 2; d++) for (let a = 0; a < n; a++) {
    const cell = (b) => (d === 0 ? [a, b] : [b, a]);
    let zeros = 0, ones = 0;
    for (let b = 0; b < n; b++) {
      const v = at(...cell(b));
      zeros += v === "0"; ones += v === "1";
      if (b >= 2 && v !== "." && v === at(...cell(b - 1)) && v === at(...cell(b - 2))) {
        for (let k = b - 2; k <= b; k++) bad.add(cell(k)[0] * n + cell(k)[1]);
      }
    }
    if (zeros > n / 2 || ones > n / 2) for (let b = 0; b < n; b++) bad.add(cell(b)[0] * n + cell(b)[1]);
  }
  return bad;
}

function renderEntry() {
  const p = S.puzzle, cells = S.cells, bad = badCells(S.entry, p.n);
  let empty = 0;
  for (let i = 0; i < cells.length; i++) {
    const v = S.entry[i];
    cells[i].textContent = v === "." ? "" : v;
    cells[i].classList.toggle("entered", p.puzzle[i] === "." && v !== ".");
    cells[i].classList.toggle("bad", bad.has(i));
    cells[i].setAttribute("aria-label", cellName(p, i, v, bad.has(i)));
    empty += v === ".";
  }
  $("filled").textContent = p.solved ? "" : empty ? `${empty} cells to fill` : bad.size ? "a rule is broken" : "ready";
  $("submit").disabled = !S.run || p.solved || !p.playable || empty > 0;
}

$("toboard").onclick = () => window.scrollTo({ top: 0, behavior: motion() });
$("clear").onclick = () => { if (S.puzzle && !S.puzzle.solved) { S.entry = S.puzzle.puzzle.split(""); renderEntry(); } };

$("submit").onclick = async () => {
  const p = S.puzzle, cells = S.entry.join("");
  $("submit").disabled = true;
  try {
    const r = await api(`/runs/${S.run}/moves`, { method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${S.token}` },
      body: JSON.stringify({ moves: [{ tile: p.tile, cells }] }) });
    const v = r.verdicts[0];
    if (v.correct) {
      S.solvedCells.set(p.tile, cells);
      await refreshRun();
      refreshAnalysis().catch(() => {});
      const keep = `Correct! +${v.reward} · tile #${p.tile} solved · reward ${$("reward").textContent} · `
        + (S.frontier.size ? `${S.frontier.size} tiles playable` : "the board is cleared");
      await openTile(p.tile);
      setVerdict(keep, "ok");
      cv.focus({ preventScroll: true });   // on to the next tile: the arrows move from this one
    } else {
      setVerdict(`Not accepted: ${v.reason}`, "bad");
      renderEntry();
    }
  } catch (e) { setVerdict(e.message, "bad"); renderEntry(); }
};

// ------------------------------------------------------------------ start

async function start() {
  resize();
  const days = await api("/days"), sel = $("day");
  for (const d of days) {
    const o = document.createElement("option");
    o.value = d.day; o.textContent = `${d.day} · G=${d.G}${d.over ? " · over" : ""}`; sel.appendChild(o);
  }
  const want = new URLSearchParams(location.search).get("day");
  const day = days.some((d) => d.day === want) ? want : (days.length ? days[days.length - 1].day : null);
  if (!day) { setVerdict("no days on offer", "bad"); return; }
  sel.value = day;
  sel.onchange = () => loadDay(sel.value);
  await loadDay(day);
  requestAnimationFrame(frame);
  window.tilesPlay.ready = true;
}

// For people poking from the console and for the browser test: where a board cell is on screen.
window.tilesPlay = {
  ready: false, analysed: 0, state: S,
  cellToClient(r, c) {
    const b = cv.getBoundingClientRect(), v = S.view;
    return { x: b.left + v.ox + (c + 0.5) * v.s, y: b.top + v.oy + (r + 0.5) * v.s };
  },
  focusTile,
};
start().catch((e) => setVerdict(e.message, "bad"));
