// Building the page from data with DOM calls only: text is always set as text, never parsed as HTML.

const SVG = "http://www.w3.org/2000/svg";

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "text") element.textContent = String(value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: h("a", {href: "#/x", class: "c"}, "text", otherNode). */
export const h = (tag, attributes, ...children) => build(document.createElement(tag), attributes, children);

/** An SVG element, as `h` makes HTML ones. */
export const s = (tag, attributes, ...children) => build(document.createElementNS(SVG, tag), attributes, children);

/** Replace what `parent` shows. */
export function show(parent, ...children) {
  parent.replaceChildren();
  build(parent, {}, children);
  return parent;
}

/** A message line: kind is "error", "note" or "ok"; role=alert for errors so they are announced. */
export const message = (text, kind = "error") =>
  h("p", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" }, text);

/** A definition list from [label, value, field] rows; `field` names the value for tests and styling. */
export const facts = (rows) =>
  h("dl", { class: "facts" }, rows.map(([label, value, field]) => [
    h("dt", {}, label), h("dd", { dataset: field ? { field } : {} }, value ?? "—"),
  ]));

/** A table of rows; `columns` are headings, each row an array of cells (text or nodes). */
export const table = (columns, rows, attributes = {}) =>
  h("div", { class: "scroll" }, h("table", attributes,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.map((cell) => h("td", {}, cell)))))));

/** A list of links with a search box filtering it by substring, case-insensitively. */
export function filteredLinks(label, items, empty = "none") {
  const list = h("ul", { class: "links" });
  const search = h("input", { type: "search", placeholder: `Search ${label}`, "aria-label": `Search ${label}`, class: "search" });
  const render = () => {
    const wanted = search.value.trim().toLowerCase();
    const shown = items.filter((item) => item.name.toLowerCase().includes(wanted));
    list.replaceChildren(...shown.map((item) => h("li", {}, h("a", { href: item.href }, item.name), item.note ? h("span", { class: "note" }, item.note) : null)));
    if (!shown.length) list.append(h("li", { class: "note" }, wanted ? "no match" : empty));
  };
  search.addEventListener("input", render);
  render();
  return h("div", { class: "filtered" }, search, list);
}

export function formatBytes(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = Number(bytes) || 0;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return `${unit ? value.toFixed(1) : value} ${units[unit]}`;
}

/** Parse "key=value" lines (blank lines and # comments skipped); throws naming the bad line. */
export function parseProperties(text) {
  const properties = {};
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const at = line.indexOf("=");
    if (at <= 0) throw new Error(`line ${index + 1}: expected key=value, got "${line}"`);
    properties[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  });
  return properties;
}
