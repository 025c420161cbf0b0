// A run's world: the Environment Card, the tools each role may call, and the apps' tables at the end of the run
// (from the state the run kept: every succeeded run keeps it compressed, a failed or `--keep` run whole).

import { api } from "./api.js";
import { el, errorBox, table } from "./dom.js";
import { panelsFor } from "./panels.js";

function tablesBox(world) {
  if (!world.tables) return el("p", { class: "empty", id: "tables-note" }, world.tables_note);
  return Object.entries(world.tables).map(([name, t]) => el("details", { class: "table", "data-table": name },
    el("summary", {}, `${name} (${t.count} rows)`),
    table(t.columns, t.rows.map((row) => el("tr", {}, row.map((v) => el("td", {}, typeof v === "object" && v !== null ? JSON.stringify(v) : v)))))));
}

export async function worldPage(main, runId) {
  let world;
  try {
    world = await api(`/api/runs/${runId}/world`);
  } catch (error) {
    main.replaceChildren(el("h1", {}, "World"), errorBox(error));
    return;
  }
  const card = world.card;
  const roles = Object.entries(world.roles);
  const tools = card.capabilities.tools.map((t) => t.name);
  const panels = el("section", { id: "panels" });
  main.replaceChildren(
    el("h1", {}, `World ${world.world} of run `, el("a", { href: `#/run/${world.run}` }, world.run)),
    el("section", { class: "card", id: "card" }, el("h2", {}, card.name), el("p", {}, card.description),
      el("p", {}, `protocol ${card.protocolVersion} · ${card.children_environments.length} apps · ${tools.length} tools`)),
    el("h2", {}, "Tools per role"),
    table(["tool", ...roles.map(([r]) => r)], tools.map((tool) => el("tr", {}, el("td", {}, tool),
      roles.map(([, allowed]) => el("td", { class: allowed.includes(tool) ? "yes" : "no" }, allowed.includes(tool) ? "✓" : "–")))), { id: "role-tools" }),
    el("h2", {}, "Tables at the end of the run"), el("div", { id: "tables" }, tablesBox(world)), panels);
  await panelsFor("world", panels, world.run);
}
