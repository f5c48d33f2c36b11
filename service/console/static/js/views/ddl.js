// Databases and tables created and dropped through the DDL routes; the pages show these only to a token
// that may change the catalog. A table is dropped with If-Match on the version its page loaded.

import { ApiError, call, paths } from "../api.js";
import { h, message, show } from "../dom.js";

// Hive's STORED AS names, and Iceberg (USING iceberg, through pyiceberg on the catalog's metastore).
const FORMATS = ["PARQUET", "ORC", "AVRO", "TEXTFILE", "ICEBERG"];
const ICEBERG = "ICEBERG";

/** "name type" lines (blank lines and # comments skipped) as columns; throws naming the bad line. */
export function parseColumns(text, what = "columns") {
  const columns = [];
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const match = line.match(/^(\S+)\s+(\S.*)$/);
    if (!match) throw new Error(`${what}, line ${index + 1}: expected "name type", got "${line}"`);
    columns.push({ name: match[1], type: match[2].trim() });
  });
  return columns;
}

/** A drop button that asks first: `question` beside Confirm and Cancel, `run()` on Confirm. */
function confirmedDrop(id, label, question, run, extra = null) {
  const confirm = h("span", { class: "confirm", hidden: true }, question, " ", extra,
    h("button", { type: "button", class: "danger", id: `confirm-${id}`, onclick: run }, "Confirm drop"),
    h("button", { type: "button", class: "quiet", onclick: () => { confirm.hidden = true; } }, "Cancel"));
  const button = h("button", { type: "button", class: "danger", id, onclick: () => { confirm.hidden = false; } }, label);
  return h("div", { class: "actions" }, button, confirm);
}

/** The form that creates a database in `catalog`; `created(name)` runs after the API answered. */
export function createDatabaseForm(catalog, created) {
  const name = h("input", { id: "new-database-name", name: "name", required: true, autocomplete: "off", spellcheck: "false" });
  const comment = h("input", { id: "new-database-comment", name: "comment", autocomplete: "off" });
  const status = h("div", { "aria-live": "polite" });
  return h("form", { class: "card", id: "create-database", onsubmit: async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim() };
    if (comment.value.trim()) body.comment = comment.value.trim();
    try {
      await call("POST", paths.databases(catalog), { body });
      created(body.name);
    } catch (error) {
      show(status, message(`Cannot create database ${body.name}: ${error.message}`));
    }
  } },
  h("h2", {}, "New database"),
  h("label", { for: "new-database-name" }, "Name"), name,
  h("label", { for: "new-database-comment" }, "Comment"), comment,
  h("button", { type: "submit" }, "Create database"),
  status);
}

/** Drop the database (CASCADE when ticked: with its tables); `dropped(name)` runs after the API answered. */
export function dropDatabasePanel(catalog, database, dropped) {
  const status = h("div", { "aria-live": "polite" });
  const cascade = h("input", { type: "checkbox", id: "drop-database-cascade" });
  return h("section", { class: "card", id: "drop-database-panel" }, h("h2", {}, "Drop"),
    confirmedDrop("drop-database", "Drop database", `Drop database ${database}?`, async () => {
      try {
        await call("DELETE", paths.database(catalog, database, cascade.checked));
        dropped(database);
      } catch (error) {
        show(status, message(`Cannot drop database ${database}: ${error.message}`));
      }
    }, h("label", { class: "check", for: "drop-database-cascade" }, cascade, " with its tables (CASCADE)")),
    status);
}

/** The form that creates a table in `database`; `created(name)` runs after the API answered. */
export function createTableForm(catalog, database, created) {
  const name = h("input", { id: "new-table-name", name: "name", required: true, autocomplete: "off", spellcheck: "false" });
  const columns = h("textarea", { id: "new-table-columns", rows: 4, spellcheck: "false", required: true,
    placeholder: "id bigint\nname string\namount decimal(10,2)" });
  const partitions = h("textarea", { id: "new-table-partitions", rows: 2, spellcheck: "false",
    placeholder: "dt string" });
  const format = h("select", { id: "new-table-format" }, FORMATS.map((f) => h("option", { value: f }, f)));
  const status = h("div", { "aria-live": "polite" });
  return h("form", { class: "card", id: "create-table", onsubmit: async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim() };
    try {
      body.columns = parseColumns(columns.value);
      if (!body.columns.length) throw new Error("type at least one column");
      const lines = partitions.value.split("\n").map((line) => line.trim()).filter((line) => line && !line.startsWith("#"));
      if (format.value === ICEBERG) {
        body.provider = "iceberg";
        if (lines.length) body.partition_transforms = lines;
      } else {
        body.stored_as = format.value;
        if (lines.length) body.partition_columns = parseColumns(lines.join("\n"), "partition columns");
      }
    } catch (error) {
      show(status, message(error.message));
      return;
    }
    try {
      await call("POST", paths.tables(catalog, database), { body });
      created(body.name);
    } catch (error) {
      show(status, message(`Cannot create table ${body.name}: ${error.message}`));
    }
  } },
  h("h2", {}, "New table"),
  h("label", { for: "new-table-name" }, "Name"), name,
  h("label", { for: "new-table-columns" }, "Columns (name type, one a line)"), columns,
  h("label", { for: "new-table-partitions" }, "Partition columns (name type, one a line; for Iceberg a column or a transform such as days(ts); optional)"), partitions,
  h("label", { for: "new-table-format" }, "Format"), format,
  h("button", { type: "submit" }, "Create table"),
  status);
}

/** Drop the table with If-Match on `table.version` (412: it changed since the page loaded it). */
export function dropTablePanel(catalog, table, dropped, reload) {
  const status = h("div", { "aria-live": "polite" });
  return h("section", { class: "card", id: "drop-table-panel" }, h("h2", {}, "Drop"),
    confirmedDrop("drop-table", "Drop table", `Drop table ${table.database}.${table.name} (version ${table.version})?`, async () => {
      try {
        await call("DELETE", paths.table(catalog, table.database, table.name), { headers: Number.isInteger(table.version) ? { "If-Match": `"${table.version}"` } : {} });
        dropped(table.name);
      } catch (error) {
        const stale = error instanceof ApiError && error.status === 412;
        show(status, message(stale
          ? `Cannot drop table ${table.name}: it changed since version ${table.version} was loaded. Reload it and try again.`
          : `Cannot drop table ${table.name}: ${error.message}`),
        stale ? h("button", { type: "button", class: "quiet", id: "reload-table", onclick: reload }, "Reload the table") : null);
      }
    }),
    status);
}
