// Each catalog's caches: entries, bytes, hit rate, loads, evictions (GET /v1/catalogs/{c}/cache), and the memory
// budget every catalog's caches share, with what they hold under it (the answer's message).

import { get, paths } from "../api.js";
import { formatBytes, h, message, show, table } from "../dom.js";

export async function cachesView(view, _names, signal) {
  const { catalogs } = await get(paths.catalogs(), { signal });
  const budget = h("p", { id: "cache-memory", class: "note" });
  const sections = catalogs.map((c) => h("section", { class: "card", dataset: { catalog: c.name } }, h("h2", {}, c.name), message("Loading…", "note")));
  show(view, h("h1", {}, "Caches"), budget,
    h("p", {}, h("button", { type: "button", class: "quiet", onclick: () => cachesView(view, _names, signal) }, "Reload")),
    catalogs.length ? sections : message("No catalogs.", "note"));
  await Promise.all(catalogs.map((c, i) => cacheTable(sections[i], budget, c.name, signal)));
}

async function cacheTable(section, budget, catalog, signal) {
  try {
    const { columns, rows, message: memory } = await get(paths.cache(catalog), { signal });
    if (memory) budget.textContent = memory[0].toUpperCase() + memory.slice(1);
    const at = Object.fromEntries(columns.map((name, i) => [name.toLowerCase(), i]));
    const value = (row, name) => (name in at ? row[at[name]] : null);
    const shown = rows.map((row) => {
      const hits = Number(value(row, "hits")) || 0;
      const misses = Number(value(row, "misses")) || 0;
      const rate = hits + misses ? `${((100 * hits) / (hits + misses)).toFixed(1)} %` : "—";
      return [value(row, "cache") ?? row[0], String(value(row, "entries")), formatBytes(value(row, "bytes")),
        String(value(row, "capacity") ?? "—"), rate, `${hits} / ${misses}`, String(value(row, "loads")),
        String(value(row, "evictions")), String(value(row, "memoryevictions") ?? 0)];
    });
    show(section, h("h2", {}, catalog),
      table(["Cache", "Entries", "Bytes", "Capacity", "Hit rate", "Hits / misses", "Loads", "Evictions", "Evicted for memory"], shown));
  } catch (error) {
    if (!signal.aborted) show(section, h("h2", {}, catalog), message(`Cannot read the caches: ${error.message}`));
  }
}
