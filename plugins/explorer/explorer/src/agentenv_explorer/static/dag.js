// The task's DAG: steps in columns by depth (a step sits right of everything it waits for), each box coloured
// by its state, with its time; edges only where they are not implied by a longer path.

import { svg } from "./dom.js";

const W = 150;
const H = 46;
const GX = 40;
const GY = 16;

function depths(steps) {
  const byId = Object.fromEntries(steps.map((s) => [s.id, s]));
  const depth = {};
  const visit = (id) => {
    if (depth[id] !== undefined) return depth[id];
    depth[id] = 0;
    depth[id] = Math.max(0, ...(byId[id]?.depends_on || []).filter((d) => byId[d]).map((d) => visit(d) + 1));
    return depth[id];
  };
  steps.forEach((s) => visit(s.id));
  return depth;
}

function reduced(steps) {
  const deps = Object.fromEntries(steps.map((s) => [s.id, new Set(s.depends_on || [])]));
  const reach = (from, to, seen = new Set()) => {
    for (const d of deps[from] || []) {
      if (d === to || (!seen.has(d) && (seen.add(d), reach(d, to, seen)))) return true;
    }
    return false;
  };
  const edges = [];
  for (const s of steps) {
    for (const d of deps[s.id]) {
      const implied = [...deps[s.id]].some((other) => other !== d && reach(other, d));
      if (!implied) edges.push([d, s.id]);
    }
  }
  return edges;
}

export function dag(steps) {
  const depth = depths(steps);
  const rows = {};
  const place = {};
  for (const s of steps) {
    const column = depth[s.id];
    rows[column] = (rows[column] || 0) + 1;
    place[s.id] = { x: 10 + column * (W + GX), y: 10 + (rows[column] - 1) * (H + GY) };
  }
  const width = 20 + (Math.max(0, ...Object.values(depth)) + 1) * (W + GX);
  const height = 20 + Math.max(...Object.values(rows)) * (H + GY);
  const edges = reduced(steps).map(([from, to]) => svg("line", { class: "edge",
    x1: place[from].x + W, y1: place[from].y + H / 2, x2: place[to].x, y2: place[to].y + H / 2 }));
  const nodes = steps.map((s) => {
    const { x, y } = place[s.id];
    const time = typeof s.duration_ms === "number" ? `${s.duration_ms.toFixed(1)} ms` : s.status;
    return svg("g", { class: `step ${s.status}`, "data-step": s.id },
      svg("rect", { x, y, width: W, height: H, rx: 6 }),
      svg("text", { x: x + 8, y: y + 18 }, `${s.id} (${s.type || "?"})`),
      svg("text", { x: x + 8, y: y + 36, class: "sub" }, `${s.status} · ${time}`),
      svg("title", {}, s.error || `${s.id}: ${s.status}`));
  });
  return svg("svg", { class: "dag", width, height, role: "img", "aria-label": "task DAG" }, edges, nodes);
}
