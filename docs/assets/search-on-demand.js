// The theme requests the search index as soon as a page opens. It is the largest file
// a page loads (about 400 kB, more than the page itself), and most readers never
// search. This holds that one request until the reader reaches for search: focus in
// the search box (a click or tap on it or its icon, or the keyboard shortcuts, which
// focus it), or a page opened from a search result (?h=, to highlight the terms). The
// theme then gets the index exactly as it asked for it, a moment later, and shows
// "Initializing search" meanwhile. Loaded in <head>, before the theme's bundle.
//
// Each edition has its own index (bigmodel_guide/editions.py): the theme asks for the
// root's, and a Chinese page gets zh/search/search_index.json instead.
(() => {
  const INDEX = /\/search\/search_index\.json$/;
  const EDITION = document.documentElement.lang.startsWith("zh") ? "zh/" : "";
  const { open, send } = XMLHttpRequest.prototype;
  const held = [];
  let released = false;

  XMLHttpRequest.prototype.open = function openHeld(method, url, ...rest) {
    const target = new URL(String(url), location.href);
    const isIndex = String(method).toUpperCase() === "GET" && INDEX.test(target.pathname);
    this.bmHeld = !released && isIndex;
    if (isIndex && EDITION && !target.pathname.endsWith(`/${EDITION}search/search_index.json`)) {
      target.pathname = target.pathname.replace(INDEX, `/${EDITION}search/search_index.json`);
    }
    return open.call(this, method, isIndex ? target.href : url, ...rest);
  };
  XMLHttpRequest.prototype.send = function sendHeld(...args) {
    if (this.bmHeld && !released) {
      held.push(() => send.apply(this, args));
      return undefined;
    }
    return send.apply(this, args);
  };

  function release() {
    if (released) return;
    released = true;
    if (!EDITION) { // a Chinese page keeps the wrapper: it points the index at its edition
      XMLHttpRequest.prototype.open = open;
      XMLHttpRequest.prototype.send = send;
    }
    for (const go of held.splice(0)) go();
  }

  if (new URLSearchParams(location.search).has("h")) release();
  const reachesForSearch = (event) => {
    const target = event.target;
    if (target instanceof Element && target.closest(".md-search, label[for='__search']")) release();
    else if (target instanceof HTMLInputElement && target.id === "__search") release();
  };
  for (const type of ["focusin", "pointerdown", "change"]) {
    document.addEventListener(type, reachesForSearch, { capture: true, passive: true });
  }
})();
