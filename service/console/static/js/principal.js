// What the signed-in token may change (GET /v1/principal), so the pages offer only the changes the service
// would accept. It only hides controls: the service checks every change itself and refuses the rest (403).

import { get, paths } from "./api.js";

const EVERY = "*";
let known = null; // {name, access, catalogs} of the signed-in token, until sign-out

export const principal = {
  load: async () => { known = await get(paths.principal()); return known; },
  forget: () => { known = null; },
  current: () => known,
  /** Catalog definitions (create, alter, drop a catalog) take the server's own token. */
  mayDefine: () => known !== null && known.access === "admin",
  /** Databases and tables of `catalog`: admin, or a write token listing the catalog (or `*`). */
  mayChange: (catalog) => known !== null && (known.access === "admin" || (known.access === "write"
    && (known.catalogs.includes(EVERY) || known.catalogs.includes(String(catalog).toLowerCase())))),
};
