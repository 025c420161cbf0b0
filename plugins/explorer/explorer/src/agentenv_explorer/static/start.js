// Start a run of an installed bundle with its options, then watch it on the live stream until it ends.

import { api, follow } from "./api.js";
import { badge, el, errorBox } from "./dom.js";

export async function startPage(main) {
  let bundles;
  try {
    bundles = (await api("/api/bundles")).bundles.filter((b) => b.status === "ready");
  } catch (error) {
    main.replaceChildren(el("h1", {}, "Start a run"), errorBox(error));
    return;
  }
  const bundle = el("select", { name: "bundle", id: "start-bundle" }, bundles.map((b) => el("option", { value: b.name }, b.name)));
  const task = el("select", { name: "task", id: "start-task" });
  const agent = el("select", { name: "agent", id: "start-agent" });
  const seed = el("input", { name: "seed", id: "start-seed", type: "number", placeholder: "task's seed" });
  const out = el("div", { id: "start-output" });
  const fill = () => {
    const chosen = bundles.find((b) => b.name === bundle.value);
    task.replaceChildren(el("option", { value: "" }, "default tasks"), ...(chosen?.tasks || []).map((t) => el("option", { value: t.file }, `${t.name}: ${t.description || ""}`)));
    agent.replaceChildren(el("option", { value: "" }, "the task's agent"), ...(chosen?.agents || []).map((a) => el("option", { value: a }, a)));
  };
  bundle.addEventListener("change", fill);
  fill();
  const form = el("form", { class: "start", onsubmit: async (event) => {
    event.preventDefault();
    const body = { bundle: bundle.value };
    if (task.value) body.task = task.value;
    if (agent.value) body.agent = agent.value;
    if (seed.value !== "") body.seed = Number(seed.value);
    out.replaceChildren(el("p", {}, "starting…"));
    let started;
    try {
      started = await api("/api/runs", { method: "POST", body });
    } catch (error) {
      out.replaceChildren(errorBox(error));
      return;
    }
    const log = el("ol", { id: "start-events", class: "live" });
    const status = el("p", { id: "start-status" }, badge("running"));
    out.replaceChildren(el("h2", {}, "Run ", el("a", { href: `#/run/${started.run}`, id: "start-run-link" }, started.run)), status, log);
    follow(started.run, (kind, data) => {
      const line = kind === "tool_called" ? `tool ${data.call.tool} (${data.call.role})`
        : kind.startsWith("step") ? `step ${data.step.id}: ${data.step.status}` : kind;
      log.append(el("li", { class: kind }, line));
      if (kind === "run_finished") status.replaceChildren(badge(data.run.status, data.run.passed), ` score ${data.run.score ?? "–"}`);
    }, () => log.append(el("li", { class: "end" }, "stream ended")));
  } },
  el("label", {}, "bundle ", bundle), el("label", {}, "task ", task), el("label", {}, "agent ", agent),
  el("label", {}, "seed ", seed), el("button", { type: "submit", id: "start-button" }, "Start"));
  main.replaceChildren(el("h1", {}, "Start a run"), form, out);
}
