// Heavy blocks come into the layout as the reader nears them, on pages that instant
// navigation swaps in. A chapter carries up to 20 widgets (most of its elements); the
// theme measures the new page the moment it is
// swapped in, which lays out every element before anything can be shown (120-150 ms on
// the bench machine). Such blocks are rendered with data-defer, and once <html> has the
// class bm-deferring (set here, after the first page was bound: that page was laid out
// by the browser's own load), the CSS leaves a deferred block's contents unrendered.
// This module reveals the blocks in and below the viewport before the first frame, the
// others as the reader scrolls towards them (an IntersectionObserver), and the rest one
// per idle moment, so that find-in-page, a screen reader and the keyboard reach
// everything within a second or two. Blocks revealed above the viewport do not move
// what the reader sees: the browser's scroll anchoring keeps it in place.

const CLASS = "bm-deferring";
const SELECTOR = "[data-defer]";
let observer = null;
let idling = false; // one idle chain at a time, across pages
let pageCount = 0; // pages shown: a timer of a page left behind does nothing
const SETTLE_MS = 300;
const MOVES = ["scroll", "wheel", "keydown", "pointerdown", "touchstart"];

function reveal(block) {
  if (!block.hasAttribute("data-defer")) return;
  block.removeAttribute("data-defer");
  if (observer) observer.unobserve(block);
}

const whenIdle = typeof window.requestIdleCallback === "function"
  ? (task) => window.requestIdleCallback(task, { timeout: 1000 })
  : (task) => setTimeout(task, 50);

function revealWhenIdle() {
  if (idling) return;
  idling = true;
  const step = () => {
    const next = document.querySelector(SELECTOR);
    if (!next) {
      idling = false;
      return;
    }
    reveal(next);
    whenIdle(step);
  };
  whenIdle(step);
}

/** Reveal every deferred block now (a restored scroll offset needs real heights). */
export function revealAll() {
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
  if (!blocks.length) return;
  // In view or within a screen below it. Revealing one moves those after it, so measure
  // again until no more come in (each pass lays out only what the last one revealed).
  const near = (block) => {
    const box = block.getBoundingClientRect();
    return box.bottom > 0 && box.top < 2 * innerHeight;
  };
  for (let pass = 0; pass < 4; pass += 1) {
    const found = blocks.filter((b) => b.hasAttribute("data-defer") && near(b));
    if (!found.length) break;
    found.forEach(reveal);
  }
  // The rest waits until the page has settled (its first frame painted, a widget's first
  // answer in), or until the reader moves: each reveal costs a frame of style and layout.
  const page = ++pageCount;
  const later = () => {
    for (const type of MOVES) removeEventListener(type, later, true);
    clearTimeout(timer);
    if (page !== pageCount) return;
    if (typeof IntersectionObserver !== "function") {
      revealAll();
      return;
    }
    observer = observer || new IntersectionObserver((entries) => {
      for (const entry of entries) if (entry.isIntersecting) reveal(entry.target);
    }, { rootMargin: "100% 0px" });
    for (const block of blocks) if (block.hasAttribute("data-defer")) observer.observe(block);
    revealWhenIdle();
  };
  const timer = setTimeout(later, SETTLE_MS);
  for (const type of MOVES) addEventListener(type, later, { capture: true, passive: true });
}
