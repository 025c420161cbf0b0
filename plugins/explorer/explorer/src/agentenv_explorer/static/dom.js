// Small DOM helpers: elements from a tag, attributes and children; formatting of scores, times and JSON.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children.flat()) {
    if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export const score = (value) => (typeof value === "number" ? value.toFixed(2) : "–");
export const ms = (value) => (typeof value === "number" ? `${value.toFixed(1)} ms` : "–");
export const seconds = (value) => (typeof value === "number" ? `${value.toFixed(2)} s` : "–");
export const when = (epoch) => (typeof epoch === "number" ? new Date(epoch * 1000).toISOString().slice(0, 19).replace("T", " ") : "–");
export const json = (value) => el("pre", { class: "json" }, JSON.stringify(value, null, 2));

export function badge(status, passed) {
  const kind = passed === false && status === "succeeded" ? "failed-score" : status;
  const label = passed === false && status === "succeeded" ? "below threshold" : status;
  return el("span", { class: `badge ${kind}`, "data-status": status }, label);
}

export function table(headers, rows, attrs = {}) {
  return el("table", attrs, el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))), el("tbody", {}, rows));
}

export function errorBox(error) {
  return el("div", { class: "error", role: "alert" }, error.message || String(error));
}

// Replace a container's children, leaving out the null/false of optional parts.
export function show(container, ...children) {
  container.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}
