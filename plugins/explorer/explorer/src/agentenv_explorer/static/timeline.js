// The trajectory on a virtual-time axis: one lane per role (triggers and world rules on their own lane), one
// mark per event, coloured by what it is. Events at the same virtual time sit side by side in order; a jump of
// the virtual clock between two events is drawn as a labelled gap.

import { svg } from "./dom.js";

const LANE = 34;
const LEFT = 130;
const STEP = 26;
const GAP = 70;
const JUMP_S = 60;

export function kindOf(event) {
  if (event.kind === "tool_call" && event.error && event.error.code === "forbidden") return "refused";
  if (event.kind === "tool_call" && event.trigger) return "trigger-call";
  if (event.kind === "tool_call" && event.error) return "error";
  return event.kind;
}

export function laneOf(event) {
  if (event.kind === "trigger" || event.kind === "access" || event.kind === "reply") return "world rules";
  if (event.kind === "tool_call" && event.trigger) return "world rules";
  return event.role || event.sender || "world rules";
}

function jumpLabel(seconds) {
  if (seconds >= 86400) return `+${(seconds / 86400).toFixed(1)} d`;
  if (seconds >= 3600) return `+${(seconds / 3600).toFixed(1)} h`;
  return `+${Math.round(seconds / 60)} min`;
}

export function timeline(events, onPick) {
  const lanes = [...new Set(events.map(laneOf))];
  let x = LEFT;
  let previous = null;
  const marks = [];
  const labels = [];
  for (const event of events) {
    const at = Date.parse(event.virtual_time) / 1000;
    if (previous !== null && at - previous >= JUMP_S) {
      labels.push(svg("g", { class: "clock-jump" },
        svg("line", { x1: x + GAP / 2 - STEP / 2, x2: x + GAP / 2 - STEP / 2, y1: 8, y2: lanes.length * LANE + 16 }),
        svg("text", { x: x + 2, y: 14 }, `clock ${jumpLabel(at - previous)}`)));
      x += GAP;
    }
    if (previous === null || at !== previous) {
      labels.push(svg("text", { class: "time", x, y: lanes.length * LANE + 30 }, event.virtual_time.slice(11, 19)));
    }
    previous = at;
    const y = lanes.indexOf(laneOf(event)) * LANE + 26;
    const title = `#${event.seq} ${event.kind} ${event.tool || event.trigger || ""} @ ${event.virtual_time}`;
    const mark = svg("circle", { class: `mark ${kindOf(event)}`, cx: x, cy: y, r: 8, "data-seq": event.seq, tabindex: 0 },
      svg("title", {}, title));
    mark.addEventListener("click", () => onPick(event));
    marks.push(mark);
    x += STEP;
  }
  const laneLines = lanes.map((lane, i) => svg("g", { class: "lane" },
    svg("line", { x1: LEFT - 10, x2: x, y1: i * LANE + 26, y2: i * LANE + 26 }),
    svg("text", { x: 4, y: i * LANE + 30 }, lane)));
  return svg("svg", { class: "timeline", width: x + 20, height: lanes.length * LANE + 40, role: "img",
    "aria-label": "trajectory on a virtual-time axis" }, laneLines, labels, marks);
}
