// The explorer's page: a hash router over the runs table, a run, its world, a comparison, starting a run, the
// installed envs and plugins, and the pages plugins add. Plain ES modules, no build step.

import { api } from "./api.js";
import { comparePage } from "./compare.js";
import { el, errorBox, show, table } from "./dom.js";
import { panelList, renderPanel } from "./panels.js";
import { runPage } from "./run.js";
import { runsPage } from "./runs.js";
import { startPage } from "./start.js";
import { worldPage } from "./world.js";

const main = document.getElementById("main");

async function envsPage() {
  const { envs } = await api("/api/envs");
  main.replaceChildren(el("h1", {}, "Envs"), table(["env", "distribution", "version", "status", "tools", "artifacts"],
    envs.map((e) => el("tr", {}, el("td", {}, e.name), el("td", {}, e.distribution), el("td", {}, e.version), el("td", {}, e.status),
      el("td", {}, e.tools.join(", ")), el("td", {}, e.artifacts.join(", "))))));
}

async function pluginsPage() {
  const report = await api("/api/plugins");
  show(main, el("h1", {}, "Plugins"),
    el("p", { id: "plugin-check" }, report.ok ? "agentenv plugin check: all plugins are compatible." : `${report.problems.length} problem(s):`),
    report.problems.length ? table(["plugin", "problem", "fix"], report.problems.map((p) => el("tr", {}, el("td", {}, p.plugin), el("td", {}, p.message), el("td", { class: "mono" }, p.fix)))) : null,
    table(["distribution", "version", "status", "contributes"], report.plugins.map((p) => el("tr", {}, el("td", {}, p.distribution), el("td", {}, p.version), el("td", {}, p.status),
      el("td", {}, Object.entries(p.contributes).map(([k, v]) => `${k}: ${v.join(", ")}`).join("; "))))));
}

async function pluginPage(name) {
  const panel = (await panelList()).find((p) => p.name === name && p.place === "page");
  if (!panel) throw new Error(`no explorer page ${name}`);
  const body = el("div", { class: "panel-body" });
  main.replaceChildren(el("h1", {}, panel.title), body);
  await renderPanel(panel, body, null);
}

async function nav() {
  const links = [["#/runs", "Runs"], ["#/start", "Start a run"], ["#/envs", "Envs"], ["#/plugins", "Plugins"]];
  for (const panel of (await panelList().catch(() => [])).filter((p) => p.place === "page")) links.push([`#/page/${panel.name}`, panel.title]);
  document.getElementById("nav").replaceChildren(...links.map(([href, text]) => el("a", { href }, text)));
}

async function route() {
  const [path, search] = (location.hash.slice(1) || "/runs").split("?");
  const params = new URLSearchParams(search || "");
  const parts = path.split("/").filter(Boolean);
  document.body.dataset.page = parts[0] || "runs";
  main.setAttribute("aria-busy", "true");
  try {
    if (parts[0] === "run" && parts[1]) await runPage(main, decodeURIComponent(parts[1]));
    else if (parts[0] === "world" && parts[1]) await worldPage(main, decodeURIComponent(parts[1]));
    else if (parts[0] === "compare") await comparePage(main, params);
    else if (parts[0] === "start") await startPage(main);
    else if (parts[0] === "envs") await envsPage();
    else if (parts[0] === "plugins") await pluginsPage();
    else if (parts[0] === "page" && parts[1]) await pluginPage(parts[1]);
    else await runsPage(main, params);
  } catch (error) {
    main.replaceChildren(errorBox(error));
  } finally {
    main.setAttribute("aria-busy", "false");
  }
}

window.addEventListener("hashchange", route);
nav();
route();
