// The runs table: filters and paging on the server, live updates while any shown run is still running,
// and a choice of two runs to compare.

import { api, query } from "./api.js";
import { badge, el, errorBox, score, seconds, table, when } from "./dom.js";

const FILTERS = ["task", "status", "passed", "agent", "bundle"];
const PAGE = 50;
const REFRESH_MS = 2000;

export async function runsPage(main, params) {
  const state = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) || ""]));
  state.offset = Number(params.get("offset") || 0);
  const chosen = new Set();
  const body = el("div", { id: "runs-body" });
  const compareButton = el("button", { id: "compare", disabled: true, onclick: () => {
    const [a, b] = [...chosen];
    location.hash = `#/compare?a=${a}&b=${b}`;
  } }, "Compare the two chosen runs");

  const inputs = FILTERS.map((name) => {
    const input = name === "status"
      ? el("select", { name }, ["", "running", "succeeded", "failed", "cancelled", "interrupted"].map((s) => el("option", { value: s, selected: s === state[name] }, s || "any status")))
      : name === "passed"
        ? el("select", { name }, [["", "passed or not"], ["true", "passed"], ["false", "not passed"]].map(([v, t]) => el("option", { value: v, selected: v === state[name] }, t)))
        : el("input", { name, placeholder: name, value: state[name] });
    return input;
  });
  const form = el("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    const values = Object.fromEntries(inputs.map((i) => [i.name, i.value]));
    location.hash = "#/runs" + query(values);
  } }, inputs, el("button", { type: "submit" }, "Filter"));

  main.replaceChildren(el("h1", {}, "Runs"), form, el("div", { class: "toolbar" }, compareButton,
    el("a", { href: "#/start", class: "button" }, "Start a run")), body);

  let timer = null;
  async function load() {
    let page;
    try {
      page = await api("/api/runs" + query({ ...Object.fromEntries(FILTERS.map((f) => [f, state[f]])), offset: state.offset, limit: PAGE }));
    } catch (error) {
      body.replaceChildren(errorBox(error));
      return;
    }
    const rows = page.runs.map((run) => el("tr", { "data-run": run.id, "data-status": run.status },
      el("td", {}, el("input", { type: "checkbox", "aria-label": `choose ${run.id}`, checked: chosen.has(run.id), onchange: (e) => {
        if (e.target.checked) chosen.add(run.id); else chosen.delete(run.id);
        compareButton.disabled = chosen.size !== 2;
      } })),
      el("td", {}, el("a", { href: `#/run/${run.id}` }, run.id)),
      el("td", {}, badge(run.status, run.passed)),
      el("td", { class: "score" }, score(run.score)),
      el("td", {}, run.task), el("td", {}, run.seed), el("td", {}, run.agent),
      el("td", {}, seconds(run.duration_s)), el("td", {}, when(run.started_at))));
    const pager = el("div", { class: "pager" },
      state.offset > 0 ? el("a", { href: "#/runs" + query({ ...state, offset: Math.max(0, state.offset - PAGE) }) }, "← newer") : null,
      ` runs ${page.offset + 1}–${page.offset + page.runs.length} `,
      page.next_offset !== null ? el("a", { href: "#/runs" + query({ ...state, offset: page.next_offset }) }, "older →") : null);
    body.replaceChildren(
      page.runs.length ? table(["", "run", "status", "score", "task", "seed", "agent", "duration", "started (UTC)"], rows, { id: "runs-table" })
        : el("p", { class: "empty" }, "No runs match. Run one: agentenv run hello"), pager);
    performance.mark("runs-rendered"); // User Timing: bench/explorer_bench.py reads when the rows were shown
    clearTimeout(timer);
    if (page.runs.some((r) => r.status === "running") || state.offset === 0) timer = setTimeout(refresh, REFRESH_MS);
  }
  function refresh() {
    if (document.body.contains(body)) load();
  }
  await load();
}
