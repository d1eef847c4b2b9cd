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
let pageCount = 0; // pages shown or left: a timer of a page left behind does nothing
let idleChain = -1; // the page (pageCount) whose blocks the idle chain is revealing
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
  if (idleChain === pageCount) return;
  const page = pageCount;
  idleChain = page;
  const step = () => {
    if (page !== pageCount) return; // the reader left that page: its blocks are going
    const next = document.querySelector(SELECTOR);
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
    for (const block of blocks) if (block.hasAttribute("data-defer")) observer.observe(block);
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
