// The change feed, live: a long poll (wait=25) from the last version seen, the catalog version ticking.

import { get, paths } from "../api.js";
import { h, message, show, table } from "../dom.js";

const WAIT_SECONDS = 25;
const KEPT = 200; // rows kept on the page
const RETRY_MS = 2000;

export async function changesView(view, _names, signal, query) {
  const { catalogs } = await get(paths.catalogs(), { signal });
  if (!catalogs.length) {
    show(view, h("h1", {}, "Changes"), message("No catalogs.", "note"));
    return;
  }
  const wanted = query.get("catalog");
  const select = h("select", { id: "changes-catalog", "aria-label": "Catalog" },
    catalogs.map((c) => h("option", { value: c.name, selected: c.name === wanted }, c.name)));
  select.addEventListener("change", () => { location.hash = `#/changes?${new URLSearchParams({ catalog: select.value })}`; });
  const version = h("output", { id: "catalog-version", class: "big" }, "…");
  const status = h("p", { id: "feed-status", class: "note", "aria-live": "polite" }, "connecting…");
  const rows = h("div", { id: "change-rows" });
  show(view, h("h1", {}, "Changes"),
    h("section", { class: "card" }, h("label", {}, "Catalog ", select),
      h("p", {}, "Catalog version ", version), status),
    h("section", { class: "card" }, h("h2", {}, "Feed"), rows));
  follow(select.value, version, status, rows, signal); // runs until the page is left (the signal aborts it)
}

async function follow(catalog, version, status, rows, signal) {
  const seen = [];
  let since = 0;
  let first = true;
  while (!signal.aborted) {
    try {
      const log = await get(paths.changes(catalog, since, first ? 0 : WAIT_SECONDS), { signal });
      if (log.truncated && !first) seen.unshift({ version: log.current, kind: "—", object: "changes were missed (log truncated or catalog rebuilt)", source: "—", at: new Date() });
      const at = new Date();
      for (const change of log.changes) seen.unshift({ ...change, at });
      seen.splice(KEPT);
      since = log.current;
      first = false;
      version.textContent = String(log.current);
      status.textContent = `live: waiting up to ${WAIT_SECONDS} s for changes after version ${since}`;
      show(rows, seen.length ? table(["Version", "Kind", "Object", "Source", "Seen"], seen.map((c) => [
        String(c.version), c.kind, h("code", {}, c.object), c.source, c.at.toLocaleTimeString()]), { id: "changes-table" })
        : message("No change yet.", "note"));
    } catch (error) {
      if (signal.aborted) return;
      status.textContent = `reconnecting: ${error.message}`;
      await new Promise((resolve) => { window.setTimeout(resolve, RETRY_MS); });
    }
  }
}
