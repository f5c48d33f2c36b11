// Where each object of the catalog lives in the console (hash routes, each name one encoded segment).

const seg = encodeURIComponent;

export const href = {
  catalog: (c) => `#/catalogs/${seg(c)}`,
  database: (c, d) => `#/catalogs/${seg(c)}/${seg(d)}`,
  table: (c, d, t) => `#/catalogs/${seg(c)}/${seg(d)}/${seg(t)}`,
  plan: (c, d, t) => `#/plan?${new URLSearchParams({ catalog: c, database: d, table: t })}`,
};
