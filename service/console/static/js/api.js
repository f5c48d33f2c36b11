// Calls to the service's REST API from the browser. The token lives in sessionStorage (this tab only, gone
// when it closes) and travels only in the Authorization header: never in a URL, never logged.

const TOKEN_KEY = "hms-catalog.token";

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** A failed call: the HTTP status and the service's error type and message. */
export class ApiError extends Error {
  constructor(status, type, message, details = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.details = details;
  }
}

/** One call; `token` overrides the signed-in one (the sign-in page tries a token before keeping it). */
export async function call(method, path, { body, headers = {}, signal, token } = {}) {
  const sent = { Accept: "application/json", ...headers };
  const bearer = token ?? session.token();
  if (bearer) sent.Authorization = `Bearer ${bearer}`;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const answer = await fetch(path, {
    method, headers: sent, signal, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!answer.ok) {
    const error = (data && data.error) || {};
    const { type = "HttpError", message = `${answer.status} ${answer.statusText}`, ...details } = error;
    if (answer.status === 401 && token === undefined) window.dispatchEvent(new CustomEvent("console:unauthorized"));
    throw new ApiError(answer.status, type, message, details);
  }
  return { data, headers: answer.headers };
}

export const get = async (path, options) => (await call("GET", path, options)).data;

const seg = encodeURIComponent;
export const paths = {
  principal: () => "/v1/principal",
  catalogs: () => "/v1/catalogs",
  catalog: (c) => `/v1/catalogs/${seg(c)}`,
  databases: (c) => `/v1/catalogs/${seg(c)}/databases`,
  database: (c, d, cascade) => `/v1/catalogs/${seg(c)}/databases/${seg(d)}` + (cascade ? "?cascade=true" : ""),
  tables: (c, d) => `/v1/catalogs/${seg(c)}/databases/${seg(d)}/tables`,
  table: (c, d, t) => `/v1/catalogs/${seg(c)}/databases/${seg(d)}/tables/${seg(t)}`,
  plan: (c, d, t) => `${paths.table(c, d, t)}/plan`,
  partitions: (c, d, t, where) => `${paths.table(c, d, t)}/partitions` + (where ? `?where=${seg(where)}` : ""),
  cache: (c) => `/v1/catalogs/${seg(c)}/cache`,
  changes: (c, since, wait) => `/v1/catalogs/${seg(c)}/changes?since=${since}` + (wait ? `&wait=${wait}` : ""),
};
