// Catalog definitions: create, alter properties (If-Match on the version shown) and drop. Secret values
// arrive masked from the API and are shown as they arrive; the forms only ever send what the user typed.

import { ApiError, call, paths } from "../api.js";
import { facts, h, message, parseProperties, show, table } from "../dom.js";

const PLACEHOLDER = "type=hms\nhive.metastore.uris=thrift://metastore:9083";

/** The form that creates a catalog; `created(definition)` runs after the API answered 201. */
export function createForm(created) {
  const name = h("input", { id: "new-catalog-name", name: "name", required: true, autocomplete: "off", pattern: "[A-Za-z_][A-Za-z0-9_]*" });
  const comment = h("input", { id: "new-catalog-comment", name: "comment", autocomplete: "off" });
  const properties = h("textarea", { id: "new-catalog-properties", name: "properties", rows: 5, placeholder: PLACEHOLDER, spellcheck: "false" });
  const status = h("div", { "aria-live": "polite" });
  return h("form", { class: "card", id: "create-catalog", onsubmit: async (event) => {
    event.preventDefault();
    let body;
    try {
      body = { name: name.value.trim(), comment: comment.value.trim(), properties: parseProperties(properties.value) };
    } catch (error) {
      show(status, message(`Properties: ${error.message}`));
      return;
    }
    try {
      const { data } = await call("POST", paths.catalogs(), { body });
      show(status, message(`Created catalog ${data.name} (version ${data.version}).`, "ok"));
      name.value = comment.value = properties.value = "";
      created(data);
    } catch (error) {
      show(status, message(`Cannot create catalog ${body.name}: ${error.message}`));
    }
  } },
  h("h2", {}, "New catalog"),
  h("label", { for: "new-catalog-name" }, "Name"), name,
  h("label", { for: "new-catalog-comment" }, "Comment"), comment,
  h("label", { for: "new-catalog-properties" }, "Properties (key=value, one a line)"), properties,
  h("button", { type: "submit" }, "Create catalog"),
  status);
}

/** The definition of a catalog with its alter and drop forms (only when `editable`: the admin token);
 * `changed()` reloads the page around it, `dropped()` leaves it. */
export function definitionPanel(definition, changed, dropped, editable = true) {
  const ifMatch = { "If-Match": `"${definition.version}"` };
  const props = Object.entries(definition.properties).sort(([a], [b]) => a.localeCompare(b));
  const status = h("div", { "aria-live": "polite" });
  const changes = h("textarea", { id: "alter-properties", rows: 3, spellcheck: "false", placeholder: "key=value (merged into the properties)" });
  const alter = h("form", { class: "inline-form", id: "alter-catalog", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const properties = parseProperties(changes.value);
      if (!Object.keys(properties).length) throw new Error("type at least one key=value line");
      const { data } = await call("PATCH", paths.catalog(definition.name), { body: { properties }, headers: ifMatch });
      changed(data, `Altered catalog ${data.name}: now version ${data.version}.`);
    } catch (error) {
      show(status, message(refusal("alter", definition, error)), stale(error));
    }
  } },
  h("label", { for: "alter-properties" }, `Set properties (If-Match version ${definition.version})`), changes,
  h("button", { type: "submit" }, "Alter properties"));

  const confirm = h("span", { class: "confirm", hidden: true },
    `Drop catalog ${definition.name}? Its definition is removed; the metastore is not touched. `,
    h("button", { type: "button", class: "danger", id: "confirm-drop", onclick: async () => {
      try {
        await call("DELETE", paths.catalog(definition.name), { headers: ifMatch });
        dropped(definition.name);
      } catch (error) {
        show(status, message(refusal("drop", definition, error)), stale(error));
      }
    } }, "Confirm drop"),
    h("button", { type: "button", class: "quiet", onclick: () => { confirm.hidden = true; } }, "Cancel"));
  const drop = h("button", { type: "button", class: "danger", id: "drop-catalog", onclick: () => { confirm.hidden = false; } },
    "Drop catalog");

  // A 412: the version shown is not the stored one any more; offer to load the stored one.
  const stale = (error) => (error instanceof ApiError && error.status === 412
    ? h("button", { type: "button", class: "quiet", id: "reload-definition", onclick: () => changed(null, null) }, "Reload the definition")
    : null);

  return h("section", { class: "card", id: "definition" },
    h("h2", {}, "Definition"),
    facts([["Type", definition.type], ["Version", String(definition.version), "version"], ["Comment", definition.comment || "—"],
      ["Updated", definition.updated_at ? new Date(definition.updated_at * 1000).toISOString() : "—"]]),
    table(["Property", "Value"], props, { id: "catalog-properties" }),
    editable ? [alter, h("div", { class: "actions" }, drop, confirm), status] : null);
}

function refusal(what, definition, error) {
  if (error instanceof ApiError && error.status === 412) {
    return `Cannot ${what} catalog ${definition.name}: it changed since version ${definition.version} was loaded. Reload it and try again.`;
  }
  return `Cannot ${what} catalog ${definition.name}: ${error.message}`;
}
