// The console's shell: sign-in, the navigation and the hash router (#/catalogs/c/d/t, #/plan, ...).

import { ApiError, call, paths, session } from "./api.js";
import { h, message, show } from "./dom.js";
import { principal } from "./principal.js";
import { catalogView, catalogsView, databaseView, tableView } from "./views/browse.js";
import { cachesView } from "./views/caches.js";
import { changesView } from "./views/changes.js";
import { planView } from "./views/plan.js";

const view = document.getElementById("view");
const nav = document.getElementById("nav");
const signOutButton = document.getElementById("sign-out");
const who = document.getElementById("who");
let current = null; // the AbortController of the shown view: leaving it stops its calls (the change feed's long poll)

const ROUTES = [
  [/^catalogs$/, "catalogs", () => catalogsView],
  [/^catalogs\/([^/]+)$/, "catalogs", () => catalogView],
  [/^catalogs\/([^/]+)\/([^/]+)$/, "catalogs", () => databaseView],
  [/^catalogs\/([^/]+)\/([^/]+)\/([^/]+)$/, "catalogs", () => tableView],
  [/^plan$/, "plan", () => planView],
  [/^caches$/, "caches", () => cachesView],
  [/^changes$/, "changes", () => changesView],
];

function signInPage(note) {
  nav.hidden = true;
  signOutButton.hidden = true;
  who.hidden = true;
  principal.forget();
  const input = h("input", { id: "token", type: "password", name: "token", autocomplete: "off", required: true,
    spellcheck: "false", "aria-describedby": "sign-in-help" });
  const status = h("div", { id: "sign-in-status", "aria-live": "polite" }, note ? message(note) : null);
  const form = h("form", { class: "sign-in card", onsubmit: async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    show(status, message("Signing in…", "note"));
    try {
      await call("GET", paths.catalogs(), { token }); // tried before it is kept
    } catch (error) {
      const text = error instanceof ApiError && error.status === 401
        ? "Wrong token: the service refused it (401 Unauthorized)."
        : `Cannot sign in: ${error.message}`;
      show(status, message(text));
      input.select();
      return;
    }
    session.signIn(token);
    input.value = "";
    if (!location.hash || location.hash === "#/") location.hash = "#/catalogs";
    route();
  } },
  h("h1", {}, "Sign in"),
  h("label", { for: "token" }, "Service token"),
  input,
  h("p", { id: "sign-in-help", class: "note" },
    "The bearer token of the service (the admin's is in HOME/server.token). It is kept in this tab only."),
  h("button", { type: "submit" }, "Sign in"),
  status);
  show(view, form);
  input.focus();
}

async function route() {
  if (current) current.abort();
  current = null;
  if (!session.token()) {
    signInPage();
    return;
  }
  if (!principal.current()) {
    // Who the token is decides which changes the pages offer: known before any page is shown.
    try {
      const found = await principal.load();
      who.textContent = `${found.name} · ${found.access}`;
      who.title = found.access === "write" ? `may change: ${found.catalogs.join(", ")}` : "";
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return; // the unauthorized event shows the sign-in page
      show(view, message(`Cannot tell what the token may do: ${error.message}`));
      return;
    }
  }
  nav.hidden = false;
  signOutButton.hidden = false;
  who.hidden = false;
  const [rawPath, rawQuery = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const path = rawPath || "catalogs";
  const found = ROUTES.map(([pattern, section, render]) => [path.match(pattern), section, render]).find(([m]) => m);
  if (!found) {
    location.hash = "#/catalogs";
    return;
  }
  const [match, section, render] = found;
  for (const link of nav.querySelectorAll("a")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const controller = new AbortController();
  current = controller;
  show(view, message("Loading…", "note"));
  try {
    await render()(view, match.slice(1).map(decodeURIComponent), controller.signal, new URLSearchParams(rawQuery));
  } catch (error) {
    if (controller.signal.aborted || (error && error.name === "AbortError")) return;
    show(view, message(error.message || String(error)));
  }
}

window.addEventListener("console:unauthorized", () => {
  session.signOut();
  principal.forget();
  if (current) current.abort();
  signInPage("The service no longer accepts the token: sign in again.");
});
signOutButton.addEventListener("click", () => {
  session.signOut();
  principal.forget();
  route();
});
window.addEventListener("hashchange", route);
route();
