// The page's edition (English at the site's root, Chinese under zh/), the widgets'
// own words in it, and the switch between editions.
//
// Words: the scripts write English, each message marked with t() so that Babel
// extracts it into the calculators' catalogue (bigmodel_guide/catalogues.py). A Chinese
// page carries its translations in <script type="application/json" id="bm-ui-text">
// (data, not code: the page's Content-Security-Policy allows it), written at build time
// from the same catalogue. Values go in through {name} placeholders, as in the Python.
//
// Switch: the header's language links (extra.alternate in mkdocs.yml) point at each
// edition's home. At the moment of the click this takes the reader to the same page in
// the other edition, with the same query (every edited calculator's inputs) and the same
// section (#anchor: a zh page keeps its English page's anchors), by a full load, since
// the other edition has its own search index, language and words.

const SITE_ROOT = new URL("../../", import.meta.url);
const EDITIONS = { en: "", zh: "zh/" };
let words = null;

/** "zh" on a Chinese page, "en" otherwise. */
export function pageLanguage() {
  return document.documentElement.lang.startsWith("zh") ? "zh" : "en";
}

function translations() {
  if (words === null || words.lang !== pageLanguage()) {
    let table = {};
    const block = document.getElementById("bm-ui-text");
    if (block && pageLanguage() !== "en") {
      try { table = JSON.parse(block.textContent || "{}"); } catch { table = {}; }
    }
    words = { lang: pageLanguage(), table };
  }
  return words.table;
}

/** ``english`` in the page's language, with its {placeholders} filled from ``values``. */
export function t(english, values = {}) {
  const template = translations()[english] || english;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** The address of this page in ``lang``'s edition, with the same query and section. */
export function counterpart(lang, where = location) {
  const rest = where.pathname.startsWith(SITE_ROOT.pathname)
    ? where.pathname.slice(SITE_ROOT.pathname.length) : "";
  const inEnglish = rest.startsWith(EDITIONS.zh) ? rest.slice(EDITIONS.zh.length) : rest;
  const target = new URL((EDITIONS[lang] ?? "") + inEnglish, SITE_ROOT);
  target.search = where.search;
  target.hash = where.hash;
  return target.href;
}

document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[hreflang]") : null;
  if (!link || !(link.getAttribute("hreflang") in EDITIONS)) return;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
    link.href = counterpart(link.getAttribute("hreflang")); // a new tab gets the same page
    return;
  }
  event.preventDefault();
  event.stopImmediatePropagation(); // not an instant navigation: a whole other edition
  location.assign(counterpart(link.getAttribute("hreflang")));
}, { capture: true });
