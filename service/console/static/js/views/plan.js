// The plan of a scan: choose a table, type a predicate (Enter plans), read what planning found and did.

import { call, get, paths } from "../api.js";
import { facts, formatBytes, h, message, s, show, table } from "../dom.js";

const SPLITS_SHOWN = 20;

export async function planView(view, _names, signal, query) {
  const pick = (id, label) => h("select", { id, "aria-label": label, required: true });
  const catalog = pick("plan-catalog", "Catalog");
  const database = pick("plan-database", "Database");
  const tableSelect = pick("plan-table", "Table");
  const where = h("input", { id: "plan-where", type: "text", placeholder: "a predicate, e.g. dt >= '2024-01-02' (empty: every partition)",
    "aria-label": "Predicate", spellcheck: "false", autocomplete: "off" });
  const result = h("div", { id: "plan-result", "aria-live": "polite" });
  const options = (select, names, wanted) => {
    select.replaceChildren(...names.map((n) => h("option", { value: n, selected: n === wanted }, n)));
    select.disabled = !names.length;
  };
  const fill = async (select, loader, wanted, next) => {
    try {
      options(select, [], null);
      options(select, await loader(), wanted);
    } catch (error) {
      if (!signal.aborted) show(result, message(error.message));
      options(select, [], null);
    }
    if (next) await next();
  };
  const loadTables = () => (database.value
    ? fill(tableSelect, async () => (await get(paths.tables(catalog.value, database.value), { signal })).tables, query.get("table"))
    : options(tableSelect, [], null));
  const loadDatabases = () => (catalog.value
    ? fill(database, async () => (await get(paths.databases(catalog.value), { signal })).databases, query.get("database"), loadTables)
    : options(database, [], null));
  catalog.addEventListener("change", () => { query.delete("database"); query.delete("table"); loadDatabases(); });
  database.addEventListener("change", () => { query.delete("table"); loadTables(); });

  const run = async () => {
    if (!tableSelect.value) {
      show(result, message("Choose a table first."));
      return;
    }
    show(result, message("Planning…", "note"));
    const body = where.value.trim() ? { where: where.value.trim() } : {};
    try {
      const { data } = await call("POST", paths.plan(catalog.value, database.value, tableSelect.value), { body, signal });
      show(result, planReport(data));
    } catch (error) {
      if (!signal.aborted) show(result, message(`Cannot plan: ${error.message}`));
    }
  };
  show(view, h("h1", {}, "Plan"),
    h("form", { class: "card plan-form", id: "plan-form", onsubmit: (event) => { event.preventDefault(); run(); } },
      h("div", { class: "pickers" }, h("label", {}, "Catalog", catalog), h("label", {}, "Database", database),
        h("label", {}, "Table", tableSelect)),
      h("label", { for: "plan-where" }, "Predicate"), where,
      h("button", { type: "submit" }, "Plan")),
    result);
  await fill(catalog, async () => (await get(paths.catalogs(), { signal })).catalogs.map((c) => c.name), query.get("catalog"), loadDatabases);
  where.focus();
}

function planReport(plan) {
  const sum = plan.summary;
  const calls = Object.entries(sum.metastore_calls || {}).sort(([a], [b]) => a.localeCompare(b));
  const phases = [["metastore", sum.hms_seconds], ["listing", sum.listing_seconds], ["splitting", sum.splitting_seconds]];
  return h("div", {},
    h("section", { class: "card" }, h("h2", {}, `Plan of ${plan.database}.${plan.table}`),
      h("p", { class: "note" }, `${plan.table_format} · ${String(plan.file_format).toUpperCase()}`, plan.predicate ? ` · where ${plan.predicate}` : " · no predicate"),
      facts([
        ["Files", String(sum.files), "files"],
        ["Bytes", `${sum.bytes} (${formatBytes(sum.bytes)})`, "bytes"],
        ["Splits", String(sum.splits), "splits"],
        ["Partitions", sum.partitions_total === null ? "not partitioned" : String(sum.partitions_total), "partitions_total"],
        ["Partitions scanned", String(sum.partitions_scanned), "partitions_scanned"],
        ["Partitions pruned", String(sum.partitions_pruned), "partitions_pruned"],
        ["Absent locations", String(sum.absent_locations), "absent_locations"],
      ]),
      (sum.notes || []).map((note) => message(note, "note"))),
    h("section", { class: "card" }, h("h2", {}, "Splits per host"), bars(Object.entries(sum.hosts || {}), (v) => String(v), "splits-per-host")),
    h("section", { class: "card" }, h("h2", {}, "Time per phase"), bars(phases, (v) => `${(v * 1000).toFixed(1)} ms`, "phases")),
    h("section", { class: "card" }, h("h2", {}, "Metastore calls"),
      calls.length ? table(["Call", "Count"], calls.map(([name, n]) => [name, String(n)]), { id: "metastore-calls" })
        : message("No metastore call (all from the cache).", "note")),
    h("section", { class: "card" }, h("h2", {}, `Splits (first ${Math.min(SPLITS_SHOWN, plan.splits.length)} of ${plan.splits.length})`),
      table(["Path", "Start", "Length", "Partition"], plan.splits.slice(0, SPLITS_SHOWN).map((split) => [
        h("code", { class: "path", title: split.path }, shortPath(split.path)), String(split.start), String(split.length),
        (split.partition_values || []).map(([k, v]) => `${k}=${v}`).join("/")]))));
}

/** A split's file as its partition directory and name (the whole path is its title). */
const shortPath = (path) => path.split("/").slice(-2).join("/");

/** A horizontal bar chart in SVG: one bar per [label, value], scaled to the largest. */
function bars(entries, label, id) {
  if (!entries.length) return message("Nothing to chart.", "note");
  const top = Math.max(...entries.map(([, v]) => v), 1e-9);
  const row = 26;
  return s("svg", { id, class: "bars", viewBox: `0 0 400 ${entries.length * row}`, role: "img", "aria-label": id.replace(/-/g, " ") },
    entries.map(([name, value], i) => s("g", { transform: `translate(0 ${i * row})` },
      s("title", {}, `${name}: ${label(value)}`),
      s("text", { x: 0, y: 17, class: "bar-label" }, name.length > 18 ? `${name.slice(0, 17)}…` : name),
      s("rect", { x: 130, y: 4, height: 18, width: Math.max(2, (value / top) * 180), class: "bar" }),
      s("text", { x: 136 + Math.max(2, (value / top) * 180), y: 17, class: "bar-value" }, label(value)))));
}
