// Heavy blocks come into the layout as the reader nears them, on pages that instant
// navigation swaps in. A chapter carries up to 20 widgets (most of its elements); the
// theme measures the new page the moment it is
// swapped in, which lays out every element before anything can be shown (120-150 ms on
// the bench machine). Such blocks are rendered with data-defer, and once <html> has the
// class bm-deferring (set here, after the first page was bound: that page was laid out
// by the browser's own load), the CSS leaves a deferred block's contents unrendered.
// This module reveals the blocks in the viewport before the first frame, the others as
// the reader scrolls towards them (an IntersectionObserver, a screen ahead), and the rest
// one per idle moment, so that find-in-page, a screen reader and the keyboard reach
// everything within a second or two. Blocks revealed above the viewport do not move
// what the reader sees: the browser's scroll anchoring keeps it in place.
//
// Hidden elements still cost the swap: the theme parses the page and moves every node
// into the document, and takes them out again when the reader leaves (the dense
// chapter's 20 widgets hold 7,000 of its 8,400 elements). So each widget also comes
// between two comments (<!--bm:lazy--> ... <!--/bm:lazy-->, bigmodel_guide/render.py):
// a page the browser loads ignores them, and in a page the theme swaps in each becomes
// an empty <template> placeholder while its HTML stays text here, not parsed at all
// until the block is revealed (the loader binds the widget then, onReveal). Parsing it
// into a template's inert content would still cost the swap: DOMParser took 38 ms for
// the dense chapter that way, 5 ms with the blocks kept as text (capstone 22 -> 7 ms).

// The prose of a swapped-in page is held back the same way, by the browser
// (content-visibility, docs/assets/prose.css): its article carries the class
// bm-prose-lazy from the parse until the page has settled, and while it does, a block
// of prose away from the viewport is a box of about its height, not laid out. The
// class goes at the first idle moment after the settle time, or at once where a real
// offset matters (revealAll: Back, printing), so that the offsets the theme records for
// Back are those of the whole page laid out.

const CLASS = "bm-deferring";
const PROSE_LAZY = "bm-prose-lazy";
const PROSE_NEAR = "data-bm-near"; // a block measured in view: laid out now (prose.css)
const LAZY = "template[data-bm-lazy]";
const SELECTOR = `${LAZY}, [data-defer]`;
const LAZY_OPEN = "<!--bm:lazy-->";
const LAZY_CLOSE = "<!--/bm:lazy-->";
// A widget's opening tag as the build writes it, and two of its attributes.
const WIDGET_TAG = /<section class="bm-calc"[^>]*>/;
const WIDGET_ID = /\sid="([^"]*)"/;
const WIDGET_CALC = /\sdata-calc="([^"]*)"/;
let observer = null;
let pageCount = 0; // pages shown or left: a timer of a page left behind does nothing
let idleChain = -1; // the page (pageCount) whose blocks the idle chain is revealing
const SETTLE_MS = 300;
const MOVES = ["scroll", "wheel", "keydown", "pointerdown", "touchstart"];
const revealListeners = new Set();
// The HTML of each lazy block not yet revealed, by its placeholder's data-bm-lazy key.
const lazyHtml = new Map();
let lazyCount = 0;

/** Call fn(element) for each element a lazy block brings into the document. */
export function onReveal(fn) {
  revealListeners.add(fn);
}

const isLazy = (block) => block instanceof HTMLTemplateElement;
const pending = (block) => (isLazy(block) ? block.isConnected : block.hasAttribute("data-defer"));

function reveal(block) {
  if (isLazy(block)) {
    if (observer) observer.unobserve(block);
    if (!block.parentNode) return;
    const key = block.dataset.bmLazy;
    const html = lazyHtml.get(key);
    lazyHtml.delete(key);
    if (html !== undefined) block.innerHTML = html; // parsed into the template's content
    const parts = Array.from(block.content.children);
    block.replaceWith(block.content);
    for (const part of parts) {
      reveal(part);
      for (const fn of revealListeners) fn(part);
    }
    return;
  }
  if (!block.hasAttribute("data-defer")) return;
  block.removeAttribute("data-defer");
  if (observer) observer.unobserve(block);
}

/** The swapped-in page's HTML, each widget between the comments an empty placeholder
 * that names it (its id and calculator, from the opening tag the build writes), but the
 * page's first: that one is bound with the page wherever it is (a data-defer block if
 * it is not near the screen), ready before the reader reaches it. */
function lazify(html) {
  const first = html.indexOf(LAZY_CLOSE);
  if (first < 0) return html;
  // Blocks of a page no longer shown (or never swapped in) are not coming back.
  for (const key of lazyHtml.keys()) {
    if (!document.querySelector(`template[data-bm-lazy="${key}"]`)) lazyHtml.delete(key);
  }
  let out = "";
  let at = first + LAZY_CLOSE.length;
  for (;;) {
    const open = html.indexOf(LAZY_OPEN, at);
    const close = open < 0 ? -1 : html.indexOf(LAZY_CLOSE, open);
    if (close < 0) break;
    const body = html.slice(open + LAZY_OPEN.length, close);
    const key = String(++lazyCount);
    lazyHtml.set(key, body);
    // The widget's id and calculator, copied as written (already escaped).
    const tag = WIDGET_TAG.exec(body)?.[0] ?? "";
    const id = WIDGET_ID.exec(tag)?.[1] ?? "";
    const calc = WIDGET_CALC.exec(tag)?.[1] ?? "";
    out += `${html.slice(at, open)}<template data-bm-lazy="${key}" data-widget="${id}" `
      + `data-widget-calc="${calc}"></template>`;
    at = close + LAZY_CLOSE.length;
  }
  return html.slice(0, first + LAZY_CLOSE.length) + out + html.slice(at);
}

// The theme turns the next page's HTML into a document with DOMParser (text/html);
// nothing else on the site parses HTML text. Only pages swapped in are touched: the
// class is set once the first page is bound.
const parseFromString = DOMParser.prototype.parseFromString;
DOMParser.prototype.parseFromString = function parseWithLazyBlocks(text, type) {
  const swapping = type === "text/html" && typeof text === "string"
    && document.documentElement.classList.contains(CLASS);
  const parsed = parseFromString.call(this, swapping ? lazify(text) : text, type);
  if (swapping) parsed.querySelector("article.md-typeset")?.classList.add(PROSE_LAZY);
  return parsed;
};

/** Lay out all of the page's prose (see PROSE_LAZY); true if it was held back. */
function layOutProse() {
  const article = document.querySelector(`article.${PROSE_LAZY}`);
  if (!article) return false;
  article.classList.remove(PROSE_LAZY);
  return true;
}

/** The element with this id, moving the lazy block that holds it into the document. */
function revealId(id) {
  if (!id) return null;
  const found = document.getElementById(id);
  if (found) return found;
  // The attribute as the build writes it (ids are slugs; escaped as Jinja escapes).
  const attribute = ` id="${id.replace(/&/g, "&amp;").replace(/"/g, "&#34;")}"`;
  for (const block of document.querySelectorAll(LAZY)) {
    if (block.dataset.widget === id || lazyHtml.get(block.dataset.bmLazy)?.includes(attribute)) {
      reveal(block);
      const revealed = document.getElementById(id);
      if (revealed) return revealed;
    }
  }
  return null;
}

function idOf(hash) {
  try {
    return hash.length > 1 ? decodeURIComponent(hash.slice(1)) : "";
  } catch {
    return ""; // a malformed anchor names nothing here
  }
}

/** An address whose anchor is in a lazy block: the browser (or the theme) found
 * nothing to scroll to. Bring the block in and jump to the anchor again, as the theme
 * does: a jump to the same address replaces the history entry, and sets :target, whose
 * scroll margin keeps the element clear of the sticky header. */
export function revealTarget() {
  const id = idOf(location.hash);
  if (id && !document.getElementById(id) && revealId(id)) location.replace(location.hash);
}

/** The first widget of a calculator on the page, or the lazy block that holds it. */
export function firstOf(calc) {
  const widget = `[data-calc="${CSS.escape(calc)}"]`;
  for (const el of document.querySelectorAll(`${widget}, ${LAZY}`)) {
    if (!isLazy(el) || el.dataset.widgetCalc === calc) return el;
  }
  return null;
}

const whenIdle = typeof window.requestIdleCallback === "function"
  ? (task) => window.requestIdleCallback(task, { timeout: 1000 })
  : (task) => setTimeout(task, 50);

function revealWhenIdle() {
  if (idleChain === pageCount) return;
  const page = pageCount;
  idleChain = page;
  const step = () => {
    if (page !== pageCount) return; // the reader left that page: its blocks are going
    // The prose first, in an idle moment of its own: one layout of the whole page
    // (about 15-30 ms for a chapter on the bench machine).
    if (layOutProse()) {
      whenIdle(step);
      return;
    }
    const next = document.querySelector(SELECTOR); // a revealed block matches no more
    if (!next) {
      idleChain = -1;
      return;
    }
    reveal(next);
    whenIdle(step);
  };
  whenIdle(step);
}

/** The reader is leaving this page (instant navigation or history): reveal nothing more
 * on their own. The wait for the next page is idle time, and a block revealed then costs
 * a style, layout and paint of the page being left (15-40 ms on the bench machine)
 * while the next one waits to be swapped in. Scrolling still reveals what comes into
 * view, for as long as this page is on screen. */
export function stopRevealing() {
  pageCount += 1;
}

/** Reveal every deferred block and lay out all the prose now (a restored scroll offset
 * needs real heights). */
export function revealAll() {
  layOutProse();
  for (const block of document.querySelectorAll(SELECTOR)) reveal(block);
}

/** The page just shown: which blocks to render now, which later. */
export function revealAround() {
  const root = document.documentElement;
  const blocks = Array.from(document.querySelectorAll(SELECTOR));
  if (!root.classList.contains(CLASS)) {
    // The first page: the browser laid it out as it loaded; deferring would only hide.
    blocks.forEach(reveal);
    root.classList.add(CLASS);
    return;
  }
  if (observer) observer.disconnect(); // the last page's blocks are gone
  const article = document.querySelector(`article.${PROSE_LAZY}`);
  // Every block of the article: prose.css decides which kinds of block wait.
  const prose = article ? Array.from(article.children) : [];
  if (!blocks.length && !prose.length) return;
  // In view: what the first frame shows. Revealing one moves those after it, so measure
  // again until no more come in (each pass lays out only what the last one revealed).
  // Those below wait for the observer, which reveals a screen ahead of the reader. (The
  // swap used to reveal a second screen too, before the page's widgets were bound: a few
  // milliseconds of parsing, style and layout on some chapters, for what nobody saw yet.)
  // The prose in view is laid out with them: the browser would only do it for the first
  // frame, and until then each block of prose stands in at its kind's typical height, so
  // a widget measured after it could be in view and measured out of it.
  const near = (block) => {
    const box = block.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  };
  for (let pass = 0; pass < 8; pass += 1) {
    const shown = prose.filter((b) => !b.hasAttribute(PROSE_NEAR) && near(b));
    const found = blocks.filter((b) => pending(b) && near(b));
    if (!shown.length && !found.length) break;
    for (const block of shown) block.setAttribute(PROSE_NEAR, "");
    found.forEach(reveal);
  }
  // The rest waits until the page has settled (its first frame painted, a widget's first
  // answer in), or until the reader moves: each reveal costs a frame of style and layout.
  const page = ++pageCount;
  const later = () => {
    for (const type of MOVES) removeEventListener(type, onMove, true);
    clearTimeout(timer);
    if (page !== pageCount) return;
    if (typeof IntersectionObserver !== "function") {
      revealAll();
      return;
    }
    observer = observer || new IntersectionObserver((entries) => {
      for (const entry of entries) if (entry.isIntersecting) reveal(entry.target);
    }, { rootMargin: "100% 0px" });
    for (const block of blocks) if (pending(block)) observer.observe(block);
    revealWhenIdle();
  };
  const timer = setTimeout(later, SETTLE_MS);
  // A press on a link is most likely the reader leaving: the click decides (see
  // stopRevealing), so it does not count as a move here.
  const onMove = (event) => {
    const onLink = (event.type === "pointerdown" || event.type === "touchstart")
      && event.target instanceof Element && event.target.closest("a[href]");
    if (!onLink) later();
  };
  for (const type of MOVES) addEventListener(type, onMove, { capture: true, passive: true });
}

// A link to an element still in a lazy block, on this page: bring the block in first,
// so that the browser (or the theme) finds the element to scroll to. Capture phase:
// before either handles the click.
document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[href*='#']") : null;
  if (!link) return;
  let url;
  try {
    url = new URL(link.getAttribute("href"), location.href);
  } catch {
    return;
  }
  if (url.pathname === location.pathname) revealId(idOf(url.hash));
}, { capture: true });
addEventListener("hashchange", revealTarget);
// Printing shows the whole page.
addEventListener("beforeprint", revealAll);

