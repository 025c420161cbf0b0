// Two runs side by side: where their trajectories part, how each verifier criterion differs, which tools were
// called a different number of times, and how the final tables differ where both runs stored a snapshot.

import { api } from "./api.js";
import { badge, el, errorBox, json, score, show, table } from "./dom.js";

function side(run, label) {
  return el("div", { class: "side" }, el("h3", {}, `${label}: `, el("a", { href: `#/run/${run.id}` }, run.id)),
    badge(run.status, run.passed), ` score ${score(run.score)} · agent ${run.agent} · seed ${run.seed}`);
}

export async function comparePage(main, params) {
  const a = params.get("a");
  const b = params.get("b");
  let answer;
  try {
    answer = await api(`/api/compare?a=${encodeURIComponent(a || "")}&b=${encodeURIComponent(b || "")}`);
  } catch (error) {
    main.replaceChildren(el("h1", {}, "Compare"), errorBox(error));
    return;
  }
  const t = answer.trajectory;
  const first = t.first_difference;
  show(main,
    el("h1", {}, "Compare two runs"),
    el("div", { class: "columns" }, side(answer.a, "A"), side(answer.b, "B")),
    el("h2", {}, "Trajectories"),
    el("p", { id: "divergence" }, t.identical ? `Identical trajectories (${t.events.a} events).`
      : `They part at event #${first.index} (A has ${t.events.a} events, B ${t.events.b}).`),
    first ? el("div", { class: "columns" }, el("div", {}, el("h4", {}, "A"), json(first.a)), el("div", {}, el("h4", {}, "B"), json(first.b))) : null,
    t.tool_calls.length ? table(["tool", "calls in A", "calls in B"], t.tool_calls.map((c) => el("tr", {}, el("td", {}, c.tool), el("td", {}, c.a), el("td", {}, c.b)))) : null,
    el("h2", {}, "Verifier criteria"),
    table(["criterion", "A", "B"], answer.criteria.map((c) => el("tr", { class: c.differs ? "differs" : "" },
      el("td", {}, c.criterion), el("td", {}, c.a ? `${score(c.a.score)} ${c.a.detail || ""}` : "–"),
      el("td", {}, c.b ? `${score(c.b.score)} ${c.b.detail || ""}` : "–"))), { id: "criteria" }),
    el("h2", {}, "Final state"),
    answer.tables ? table(["table", "rows only in A", "rows only in B"], Object.entries(answer.tables).map(([name, d]) =>
      el("tr", {}, el("td", {}, name), el("td", {}, d.only_a), el("td", {}, d.only_b))))
      : el("p", { class: "empty" }, answer.tables_note));
}
