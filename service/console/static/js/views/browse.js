// Catalogs -> databases -> tables, and a table's page: columns, formats, storage, partitions, changes.

import { get, paths } from "../api.js";
import { facts, filteredLinks, h, message, show, table } from "../dom.js";
import { principal } from "../principal.js";
import { createDatabaseForm, createTableForm, dropDatabasePanel, dropTablePanel } from "./ddl.js";
import { createForm, definitionPanel } from "./definitions.js";
import { href } from "./links.js";

const PAGE_SIZE = 25;
let flash = null; // a message for the next page shown (a dropped object's, on the page it leaves for)

/** Show `note` on the page `route` leads to, then go there. */
function leave(route, note) {
  flash = note;
  location.hash = route;
}

function takeFlash() {
  const note = flash;
  flash = null;
  return note;
}

const crumbs = (...parts) => h("nav", { class: "crumbs", "aria-label": "Breadcrumbs" },
  h("a", { href: "#/catalogs" }, "catalogs"),
  parts.map(([label, link]) => [" / ", link ? h("a", { href: link }, label) : h("span", {}, label)]));

export async function catalogsView(view, _names, signal) {
  const { catalogs } = await get(paths.catalogs(), { signal });
  const items = catalogs.map((c) => ({ name: c.name, href: href.catalog(c.name), note: `${c.type} · version ${c.version}` }));
  const note = takeFlash();
  const admin = principal.mayDefine();
  show(view,
    h("h1", {}, "Catalogs"),
    note ? message(note, "ok") : null,
    h("section", { class: "card" }, filteredLinks("catalogs", items, admin ? "no catalogs yet: create one below" : "no catalogs yet")),
    admin ? createForm((created) => { location.hash = href.catalog(created.name); }) : null);
}

export async function catalogView(view, [catalog], signal, _query, note = takeFlash()) {
  const definition = await get(paths.catalog(catalog), { signal });
  const databases = h("section", { class: "card" }, h("h2", {}, "Databases"), message("Loading…", "note"));
  const reload = (_changed, text) => catalogView(view, [catalog], signal, _query, text);
  const dropped = (name) => leave("#/catalogs", `Dropped catalog ${name}.`);
  const newDatabase = principal.mayChange(definition.name)
    ? createDatabaseForm(definition.name, (name) => leave(href.database(definition.name, name), `Created database ${name}.`)) : null;
  show(view, crumbs([definition.name]), h("h1", {}, `Catalog ${definition.name}`),
    note ? message(note, "ok") : null, databases, newDatabase,
    definitionPanel(definition, reload, dropped, principal.mayDefine()));
  try {
    const names = (await get(paths.databases(catalog), { signal })).databases;
    show(databases, h("h2", {}, "Databases"),
      filteredLinks("databases", names.map((d) => ({ name: d, href: href.database(catalog, d) }))));
  } catch (error) {
    if (signal.aborted) return;
    show(databases, h("h2", {}, "Databases"), message(`Cannot list the databases: ${error.message}`));
  }
}

export async function databaseView(view, [catalog, database], signal) {
  const { tables } = await get(paths.tables(catalog, database), { signal });
  const note = takeFlash();
  const changes = principal.mayChange(catalog);
  show(view, crumbs([catalog, href.catalog(catalog)], [database]), h("h1", {}, `Database ${database}`),
    note ? message(note, "ok") : null,
    h("section", { class: "card" }, h("h2", {}, "Tables"),
      filteredLinks("tables", tables.map((t) => ({ name: t, href: href.table(catalog, database, t) })))),
    changes ? createTableForm(catalog, database, (name) => leave(href.table(catalog, database, name), `Created table ${name}.`)) : null,
    changes ? dropDatabasePanel(catalog, database, (name) => leave(href.catalog(catalog), `Dropped database ${name}.`)) : null);
}

export async function tableView(view, [catalog, database, name], signal) {
  const t = await get(paths.table(catalog, database, name), { signal });
  const note = takeFlash();
  const storage = t.storage || {};
  const ids = fieldIds(t);
  const columns = t.columns.map((c) => [c.name, h("code", {}, c.type), ...(ids ? [ids.get(c.name.toLowerCase()) ?? "—"] : []),
    c.partition_key ? h("span", { class: "badge", title: "partition key" }, "partition key") : ""]);
  const drop = principal.mayChange(catalog)
    ? dropTablePanel(catalog, t, (dropped) => leave(href.database(catalog, database), `Dropped table ${dropped}.`),
      () => tableView(view, [catalog, database, name], signal))
    : null;
  const partitions = h("section", { class: "card", id: "partitions" });
  const changes = h("section", { class: "card", id: "table-changes" }, h("h2", {}, "Changes"), message("Loading…", "note"));
  show(view, crumbs([catalog, href.catalog(catalog)], [database, href.database(catalog, database)], [t.name]),
    h("h1", {}, `Table ${t.database}.${t.name}`),
    note ? message(note, "ok") : null,
    h("p", {}, h("a", { href: href.plan(catalog, database, t.name), class: "button" }, "Plan a scan of this table")),
    h("section", { class: "card" }, h("h2", {}, "Table"), facts([
      ["Format", t.format, "format"], ["File format", (t.file_format || "—").toUpperCase(), "file_format"], ["Location", t.location, "location"],
      ["Version", String(t.version), "version"], ["Partition keys", (t.partition_keys || []).join(", ") || "none", "partition_keys"],
      ["Detected", t.reason, "reason"]])),
    h("section", { class: "card" }, h("h2", {}, "Columns"), table(["Name", "Type", ...(ids ? ["Field id"] : []), "Partition"], columns, { id: "columns" })),
    h("section", { class: "card" }, h("h2", {}, "Storage"), facts([
      ["Input format", storage.input_format, "input_format"], ["Output format", storage.output_format, "output_format"],
      ["SerDe", storage.serde, "serde"]]),
    table(["Table parameter", "Value"], Object.entries(storage.table_parameters || {}).sort(([a], [b]) => a.localeCompare(b)))),
    partitions, changes, drop);
  partitionsPanel(partitions, catalog, database, t, signal);
  tableChanges(changes, catalog, database, t.name, signal);
}

/** Iceberg's field id of each top-level column by lower-case name (from the Spark schema's
 * ``parquet.field.id`` metadata), or null when the table has none (Hive tables). */
function fieldIds(t) {
  const fields = (t.spark_schema && t.spark_schema.fields) || [];
  const ids = new Map(fields.filter((f) => f.metadata && f.metadata["parquet.field.id"] !== undefined)
    .map((f) => [f.name.toLowerCase(), String(f.metadata["parquet.field.id"])]));
  return ids.size ? ids : null;
}

function partitionsPanel(section, catalog, database, t, signal) {
  if (!(t.partition_keys || []).length) {
    show(section, h("h2", {}, "Partitions"), message("The table is not partitioned.", "note"));
    return;
  }
  const where = h("input", { id: "partition-filter", type: "search", placeholder: `a predicate: ${t.partition_keys[0]} = '…'`,
    "aria-label": "Partition predicate", spellcheck: "false" });
  const result = h("div", { "aria-live": "polite" });
  let names = [];
  let page = 0;
  const render = () => {
    const pages = Math.max(1, Math.ceil(names.length / PAGE_SIZE));
    page = Math.min(page, pages - 1);
    const shown = names.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
    show(result,
      h("p", { class: "note" }, `${names.length} partition${names.length === 1 ? "" : "s"}`),
      h("ul", { class: "partitions" }, shown.map((n) => h("li", {}, h("code", {}, n)))),
      pages > 1 ? h("div", { class: "pager" },
        h("button", { type: "button", class: "quiet", disabled: page === 0, onclick: () => { page -= 1; render(); } }, "Previous"),
        h("span", {}, ` page ${page + 1} of ${pages} `),
        h("button", { type: "button", class: "quiet", disabled: page >= pages - 1, onclick: () => { page += 1; render(); } }, "Next"))
        : null);
  };
  const load = async () => {
    show(result, message("Loading…", "note"));
    try {
      names = (await get(paths.partitions(catalog, database, t.name, where.value.trim()), { signal })).partitions;
      page = 0;
      render();
    } catch (error) {
      if (!signal.aborted) show(result, message(`Cannot list the partitions: ${error.message}`));
    }
  };
  show(section, h("h2", {}, "Partitions"),
    h("form", { class: "inline-form", onsubmit: (event) => { event.preventDefault(); load(); } }, where,
      h("button", { type: "submit" }, "Filter")), result);
  load();
}

async function tableChanges(section, catalog, database, name, signal) {
  const ours = `${database}.${name}`.toLowerCase();
  try {
    const log = await get(paths.changes(catalog, 0), { signal });
    const rows = log.changes.filter((c) => c.object === "catalog" || c.object.split(" ")[1] === ours || c.object === `database ${database.toLowerCase()}`)
      .reverse().map((c) => [String(c.version), c.kind, h("code", {}, c.object), c.source]);
    show(section, h("h2", {}, "Changes"),
      h("p", { class: "note" }, `From the catalog's change log (now at version ${log.current}; oldest kept ${log.oldest}).`),
      rows.length ? table(["Version", "Kind", "Object", "Source"], rows) : message("No change of this table in the log.", "note"));
  } catch (error) {
    if (!signal.aborted) show(section, h("h2", {}, "Changes"), message(`Cannot read the change log: ${error.message}`));
  }
}
