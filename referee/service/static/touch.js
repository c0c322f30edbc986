// Pointer gestures on an element, for the play page's board canvas: one finger (or a mouse button)
// drags to pan, two fingers pinch to zoom about their middle (and pan with it), a press that stays
// put is a tap. Mouse, pen and touch all come as pointer events; the canvas has `touch-action: none`
// so the browser's own scrolling and zooming never fight these. Plain JS, no library.
"use strict";

(function () {
  // How far (CSS px) a pointer may wander and still tap: a finger is less steady than a mouse.
  const SLOP = { mouse: 4, pen: 6, touch: 10 };

  // Listen on `el`; `on` has pan(dx, dy), zoom(x, y, factor), tap(x, y), hover(x, y), every point in
  // CSS px from the element's top left corner. Returns the live pointer map (for tests: its size).
  function attach(el, on) {
    const down = new Map();          // pointerId -> {x, y}: the pointers pressed on the element
    let tap = null;                  // the one pointer that may still become a tap: {id, x, y, slop}
    let last = null;                 // the gesture at its last step: centre and spread of the pointers

    const at = (e) => { const r = el.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    const shape = () => {            // centre of the first two pointers, and their distance apart
      const p = [...down.values()].slice(0, 2);
      if (!p.length) return null;
      const x = p.reduce((a, q) => a + q.x, 0) / p.length, y = p.reduce((a, q) => a + q.y, 0) / p.length;
      return { x, y, n: p.length, d: p.length === 2 ? Math.hypot(p[0].x - p[1].x, p[0].y - p[1].y) : 0 };
    };

    el.addEventListener("pointerdown", (e) => {
      if (e.pointerType === "mouse" && e.button !== 0) return;
      try { el.setPointerCapture(e.pointerId); } catch (_) { /* a pointer already gone */ }
      const [x, y] = at(e);
      down.set(e.pointerId, { x, y });
      tap = down.size === 1 ? { id: e.pointerId, x, y, slop: SLOP[e.pointerType] || 6 } : null;
      last = shape();
    });

    el.addEventListener("pointermove", (e) => {
      const [x, y] = at(e), p = down.get(e.pointerId);
      if (!p) { if (e.pointerType === "mouse" && on.hover) on.hover(x, y); return; }
      p.x = x; p.y = y;
      if (tap && Math.hypot(x - tap.x, y - tap.y) <= tap.slop) return;   // not moved yet: maybe a tap
      tap = null; el.classList.add("dragging");
      const now = shape();
      if (last && now.n === last.n) {
        if (now.x !== last.x || now.y !== last.y) on.pan(now.x - last.x, now.y - last.y);
        if (now.n === 2 && last.d > 0 && now.d > 0 && now.d !== last.d) on.zoom(now.x, now.y, now.d / last.d);
      }
      last = now;
    });

    const end = (e) => {
      if (!down.has(e.pointerId)) return;
      down.delete(e.pointerId);
      const [x, y] = at(e);
      if (tap && tap.id === e.pointerId && e.type === "pointerup") on.tap(x, y);
      tap = null;
      last = shape();                // a finger lifted: the other one carries on from where it is
      if (!down.size) el.classList.remove("dragging");
    };
    el.addEventListener("pointerup", end);
    el.addEventListener("pointercancel", end);
    return down;
  }

  window.tilesGestures = { attach, SLOP };
})();
