// Storage helpers the Material theme's bundle expects as globals (__md_scope,
// __md_hash, __md_get, __md_set). The theme defines them in an inline script; this
// file does the same job so that the site runs under script-src 'self'. Keys are
// scoped by the site root, which is two levels above this file.
(() => {
  const script = document.currentScript;
  const scope = new URL("../../", script ? script.src : location.href);
  const keyOf = (key, base) => `${base.pathname}.${key}`;
  window.__md_scope = scope;
  window.__md_hash = (text) =>
    Array.from(text).reduce((hash, char) => (hash << 5) - hash + char.charCodeAt(0), 0);
  window.__md_get = (key, storage = localStorage, base = window.__md_scope) =>
    JSON.parse(storage.getItem(keyOf(key, base)));
  window.__md_set = (key, value, storage = localStorage, base = window.__md_scope) => {
    try {
      storage.setItem(keyOf(key, base), JSON.stringify(value));
    } catch {
      // Storage may be full or disabled (private mode): the choice is then not kept.
    }
  };
})();
