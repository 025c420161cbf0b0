// Panels and pages that plugins add (`explorer_panels` hook): each is an ES module served by the API whose
// `render(element, data)` draws the data its plugin serves for a run.

import { api, withToken } from "./api.js";
import { el, errorBox } from "./dom.js";

let known = null;

export async function panelList() {
  if (known === null) known = (await api("/api/panels")).panels;
  return known;
}

export async function renderPanel(panel, element, runId) {
  try {
    const [module, data] = await Promise.all([import(withToken(panel.script)), runId ? api(`/api/panels/${panel.name}/data/${runId}`) : null]);
    module.render(element, data);
  } catch (error) {
    element.replaceChildren(errorBox(error));
  }
}

export async function panelsFor(place, container, runId) {
  for (const panel of (await panelList()).filter((p) => p.place === place)) {
    const body = el("div", { class: "panel-body" });
    container.append(el("section", { class: "panel", "data-panel": panel.name }, el("h2", {}, panel.title), body));
    await renderPanel(panel, body, runId);
  }
}
