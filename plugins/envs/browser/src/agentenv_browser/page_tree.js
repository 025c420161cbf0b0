([maxLines, ATTR]) => {
  const body = document.body;
  if (!body) return "";
  let next = Number(body.getAttribute("data-agentenv-next") || "1");
  const lines = [];
  const clip = (text, n) => {
    text = (text || "").replace(/\s+/g, " ").trim();
    return text.length > n ? text.slice(0, n - 1) + "…" : text;
  };
  const shown = (el) => {
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 || box.height > 0 || el.tagName === "OPTION";
  };
  const INPUT_ROLES = {checkbox: "checkbox", radio: "radio", submit: "button", button: "button", reset: "button",
                       range: "slider", number: "spinbutton", search: "searchbox", email: "textbox", hidden: null};
  const role = (el) => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit;
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return "link";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "SELECT") return "combobox";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "INPUT") { const t = (el.type || "text").toLowerCase(); return t in INPUT_ROLES ? INPUT_ROLES[t] : "textbox"; }
    if (/^H[1-6]$/.test(tag)) return "heading";
    if (tag === "IMG") return "img";
    if (tag === "LABEL") return "label";
    if (tag === "TH" || tag === "TD") return "cell";
    if (tag === "LI") return "listitem";
    return null;
  };
  const interactive = (el, r) => ["link", "button", "combobox", "textbox", "checkbox", "radio", "slider",
    "spinbutton", "searchbox", "tab", "menuitem", "option", "switch"].includes(r) || el.hasAttribute("onclick");
  const ownText = (el) => Array.from(el.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join(" ");
  const name = (el, r) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return aria;
    if (el.labels && el.labels.length) return el.labels[0].innerText;
    if (r === "combobox") return el.name || "";
    if (r === "textbox" || r === "searchbox" || r === "spinbutton") return el.getAttribute("placeholder") || el.name || "";
    if (r === "img") return el.alt || el.title || "";
    if (el.tagName === "INPUT") return el.value || el.name || "";
    return interactive(el, r) || r === "heading" ? el.innerText : ownText(el);
  };
  const walk = (el, depth) => {
    if (lines.length >= maxLines || !shown(el)) return;
    if (["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "OPTION"].includes(el.tagName)) return;
    let r = role(el);
    const text = clip(ownText(el), 200);
    const listed = r !== null ? (interactive(el, r) || r === "heading" || r === "img" || text) : !!text;
    if (r === null && text) r = "text";
    let inner = depth;
    if (listed) {
      let id = el.getAttribute(ATTR);
      if (!id) { id = String(next++); el.setAttribute(ATTR, id); }
      let line = "  ".repeat(depth) + "[" + id + "] " + r + ' "' + clip(name(el, r), 120).replace(/"/g, "'") + '"';
      if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") {
        if (el.type === "checkbox" || el.type === "radio") line += el.checked ? " checked" : " unchecked";
        else if (r !== "button") line += ' value="' + clip(el.value, 120) + '"';
      }
      if (el.tagName === "SELECT") {
        const options = Array.from(el.options).map((o) => (o.selected ? "*" : "") + clip(o.label, 40));
        line += " options=[" + options.join(" | ") + "]";
      }
      if (el.disabled) line += " disabled";
      lines.push(line);
      inner = depth + 1;
    }
    if (r === "combobox") return;
    for (const child of el.children) walk(child, inner);
  };
  walk(body, 0);
  body.setAttribute("data-agentenv-next", String(next));
  return lines.join("\n");
}
