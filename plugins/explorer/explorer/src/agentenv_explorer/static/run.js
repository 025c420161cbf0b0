// One run: its summary, the task DAG with each step's state and time, the trajectory on a virtual-time axis and
// as a paged, filterable event list (each event's arguments and result on a click), the verifier breakdown, the
// agent's transcript, plugin panels, and live events while it runs.

import { api, follow, query } from "./api.js";
import { dag } from "./dag.js";
import { badge, el, errorBox, json, score, seconds, table, when } from "./dom.js";
import { kindOf, timeline } from "./timeline.js";
import { panelsFor } from "./panels.js";

const PAGE = 200;

function summaryBox(run) {
  const s = run.summary;
  return el("dl", { class: "summary" },
    el("dt", {}, "status"), el("dd", {}, badge(s.status, s.passed)),
    el("dt", {}, "score"), el("dd", { id: "run-score" }, score(s.score)),
    el("dt", {}, "task"), el("dd", {}, `${s.task} (${s.bundle || "task file"})`),
    el("dt", {}, "seed"), el("dd", {}, s.seed),
    el("dt", {}, "agent"), el("dd", {}, s.agent),
    el("dt", {}, "duration"), el("dd", {}, seconds(s.duration_s)),
    el("dt", {}, "started"), el("dd", {}, when(s.started_at)),
    el("dt", {}, "digest"), el("dd", { class: "mono" }, run.trajectory_digest || "–"));
}

function verifierBox(verifier) {
  const sections = Object.entries(verifier.verifiers || {}).map(([name, output]) => el("section", { class: "verifier", "data-verifier": name },
    el("h3", {}, `${name}: score ${score(output.score)}`),
    table(["criterion", "passed", "score", "weight", "evidence"], (output.rows || []).map((row) => el("tr", { class: row.passed ? "pass" : "fail" },
      el("td", {}, row.criterion), el("td", {}, row.passed ? "yes" : "no"), el("td", {}, score(row.score)),
      el("td", {}, row.weight ?? "–"), el("td", {}, row.detail || ""))))));
  return sections.length ? sections : el("p", { class: "empty" }, "No verifier ran (an open-ended task, or the run did not reach it).");
}

function transcript(steps) {
  const turns = steps.flatMap((s) => ((s.output || {}).turns || []).map((t) => ({ ...t, step: s.id })));
  if (!turns.length) return el("p", { class: "empty" }, "No agent transcript in this run.");
  return el("ol", { class: "transcript" }, turns.map((t) => el("li", {},
    el("div", { class: "user" }, el("b", {}, "user: "), t.user), el("div", { class: "agent" }, el("b", {}, "agent: "), t.agent))));
}

function eventRow(event, pick) {
  const what = event.tool || event.trigger || event.sender || "";
  const outcome = event.error ? `error: ${event.error.code}` : "";
  return el("tr", { class: `event ${kindOf(event)}`, "data-seq": event.seq, onclick: () => pick(event) },
    el("td", {}, event.seq), el("td", { class: "mono" }, (event.virtual_time || "").slice(0, 19)), el("td", {}, kindOf(event)),
    el("td", {}, event.role || ""), el("td", {}, what), el("td", {}, outcome));
}

async function trajectorySection(container, run, firstPage) {
  const detail = el("div", { id: "event-detail", class: "detail" }, "Click an event to see its arguments and result.");
  const pick = (event) => detail.replaceChildren(el("h4", {}, `#${event.seq} ${kindOf(event)} ${event.tool || event.trigger || ""}`),
    el("div", { class: "columns" }, el("div", {}, el("h5", {}, "arguments"), json(event.args ?? null)),
      el("div", {}, el("h5", {}, event.error ? "error" : "result"), json(event.error ?? event.result ?? null))), json(event));
  const filters = ["kind", "role", "tool", "q"].map((name) => el("input", { name, placeholder: name === "q" ? "text" : name }));
  const list = el("div", {});
  const axis = el("div", { class: "axis" });
  let offset = 0;
  async function load() {
    const values = Object.fromEntries(filters.map((f) => [f.name, f.value]));
    let page;
    try {
      const first = firstPage;
      firstPage = null; // asked for with the record, so the first page costs no extra round trip
      page = await (first || api(`/api/runs/${run.id}/trajectory` + query({ ...values, offset, limit: PAGE })));
    } catch (error) {
      list.replaceChildren(errorBox(error));
      return;
    }
    axis.replaceChildren(timeline(page.events, pick));
    const total = page.total !== undefined ? ` of ${page.total}` : "";
    list.replaceChildren(
      table(["#", "virtual time", "kind", "role", "tool / trigger", "outcome"], page.events.map((e) => eventRow(e, pick)), { id: "events-table" }),
      el("div", { class: "pager" },
        offset > 0 ? el("button", { onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }, "← earlier") : null,
        ` events ${page.events.length ? offset + 1 : 0}–${offset + page.events.length}${total} `,
        page.next_offset !== null ? el("button", { id: "events-next", onclick: () => { offset = page.next_offset; load(); } }, "later →") : null));
    performance.mark("trajectory-rendered"); // User Timing, read by bench/explorer_bench.py
  }
  const form = el("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); offset = 0; load(); } }, filters, el("button", { type: "submit" }, "Filter events"));
  container.replaceChildren(el("h2", {}, "Trajectory"), el("p", { class: "legend" },
    ["tool_call", "trigger", "trigger-call", "refused", "error", "access", "agent_turn", "reply"].map((k) => el("span", { class: `key ${k}` }, k))),
  axis, form, list, detail);
  if (run.trajectories && Object.keys(run.trajectories).length) await load();
  else container.append(el("p", { class: "empty" }, "No stored trajectory (yet): a running run's events appear below as they happen."));
}

function liveSection(container, run, steps, refreshSteps) {
  const log = el("ol", { id: "live-events", class: "live" });
  container.replaceChildren(el("h2", {}, "Live"), log);
  follow(run.id, (kind, data) => {
    const line = kind === "tool_called" ? `${data.call.role}: ${data.call.tool}` : kind.startsWith("step")
      ? `${data.step.id} ${data.step.status}` : kind === "run_finished" ? `finished: ${data.run.status}` : kind;
    log.append(el("li", { class: kind }, line));
    if (kind.startsWith("step")) {
      const found = steps.find((s) => s.id === data.step.id);
      if (found) Object.assign(found, data.step);
      refreshSteps();
    }
    if (kind === "run_finished") setTimeout(() => window.dispatchEvent(new HashChangeEvent("hashchange")), 300);
  }, () => {});
}

export async function runPage(main, runId) {
  let run, steps, verifier;
  const firstPage = api(`/api/runs/${runId}/trajectory` + query({ offset: 0, limit: PAGE }));
  firstPage.catch(() => {}); // a run with no stored trajectory yet answers 409; the section says so instead
  try {
    [run, steps, verifier] = await Promise.all([api(`/api/runs/${runId}`), api(`/api/runs/${runId}/steps`), api(`/api/runs/${runId}/verifier`)]);
  } catch (error) {
    main.replaceChildren(el("h1", {}, "Run"), errorBox(error));
    return;
  }
  const dagBox = el("div", { id: "dag" });
  const refreshSteps = () => dagBox.replaceChildren(dag(steps.steps));
  refreshSteps();
  const trajectory = el("section", { id: "trajectory" });
  const live = el("section", { id: "live" });
  const panels = el("section", { id: "panels" });
  const actions = el("div", { class: "toolbar" },
    el("a", { class: "button", href: `#/world/${run.id}` }, "World"),
    el("a", { class: "button", href: `#/runs?task=${encodeURIComponent(run.task)}` }, "Runs of this task"),
    run.status === "running" ? el("button", { id: "cancel", onclick: async (e) => {
      e.target.disabled = true;
      try { await api(`/api/runs/${run.id}/cancel`, { method: "POST" }); } catch (error) { actions.append(errorBox(error)); }
    } }, "Cancel") : null);
  main.replaceChildren(el("h1", {}, `Run ${run.id}`), actions, summaryBox(run),
    el("h2", {}, "Steps"), dagBox,
    table(["step", "type", "status", "attempts", "time", "error"], steps.steps.map((s) => el("tr", { class: s.status },
      el("td", {}, s.id), el("td", {}, s.type || ""), el("td", {}, s.status), el("td", {}, s.attempts ?? "–"),
      el("td", {}, typeof s.duration_ms === "number" ? `${s.duration_ms.toFixed(1)} ms` : "–"), el("td", {}, s.error || "")))),
    el("h2", {}, "Verifier"), el("div", { id: "verifier" }, verifierBox(verifier)),
    trajectory, live,
    el("h2", {}, "Transcript"), transcript(steps.steps), panels);
  await trajectorySection(trajectory, run, firstPage);
  if (run.status === "running") liveSection(live, run, steps.steps, refreshSteps);
  await panelsFor("run", panels, run.id);
}
