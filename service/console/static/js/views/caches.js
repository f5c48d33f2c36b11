// Each catalog's caches: entries, hit rate, loads, evictions (GET /v1/catalogs/{c}/cache).

import { get, paths } from "../api.js";
import { h, message, show, table } from "../dom.js";

export async function cachesView(view, _names, signal) {
  const { catalogs } = await get(paths.catalogs(), { signal });
  const sections = catalogs.map((c) => h("section", { class: "card", dataset: { catalog: c.name } }, h("h2", {}, c.name), message("Loading…", "note")));
  show(view, h("h1", {}, "Caches"),
    h("p", {}, h("button", { type: "button", class: "quiet", onclick: () => cachesView(view, _names, signal) }, "Reload")),
    catalogs.length ? sections : message("No catalogs.", "note"));
  await Promise.all(catalogs.map((c, i) => cacheTable(sections[i], c.name, signal)));
}

async function cacheTable(section, catalog, signal) {
  try {
    const { columns, rows } = await get(paths.cache(catalog), { signal });
    const at = Object.fromEntries(columns.map((name, i) => [name.toLowerCase(), i]));
    const value = (row, name) => (name in at ? row[at[name]] : null);
    const shown = rows.map((row) => {
      const hits = Number(value(row, "hits")) || 0;
      const misses = Number(value(row, "misses")) || 0;
      const rate = hits + misses ? `${((100 * hits) / (hits + misses)).toFixed(1)} %` : "—";
      return [value(row, "cache") ?? row[0], String(value(row, "entries")), String(value(row, "capacity") ?? "—"), rate,
        `${hits} / ${misses}`, String(value(row, "loads")), String(value(row, "evictions"))];
    });
    show(section, h("h2", {}, catalog),
      table(["Cache", "Entries", "Capacity", "Hit rate", "Hits / misses", "Loads", "Evictions"], shown));
  } catch (error) {
    if (!signal.aborted) show(section, h("h2", {}, catalog), message(`Cannot read the caches: ${error.message}`));
  }
}
