// Live calculators, main thread. The page already shows numbers computed at build
// time; this module binds the forms and, on the first sign of interaction with a
// calculator (pointer over it, focus in it, a touch, an edit) or a link that carries
// inputs, starts the runtime: one module Worker hosting Pyodide and the calculators.
// Until then the page loads no runtime bytes: the pre-rendered numbers carry it. The
// main thread never runs Python, so the page never freezes.

import "./abbr.js";
import { t } from "./language.js";
import { ask, onRuntime, Runaway, runtimeFailure, runtimeState, startRuntime } from "./runtime.js";
import {
  applyResult, clearErrors, openPhoneFold, differsFromExample, exampleInputs, labelOf, markSilent,
  readInputs, resultSnapshot, setState, setStatus, showError,
} from "./dom.js";
import { renderComparison, restoreFromLink, runAction, keysFor, THEME_KEYS } from "./share.js";
import {
  addFoldedInputs, applyConditions, bindConfig, bindHelp, bindPresets, encodeWidget, hasConditions,
  presetsEdited, rememberInAddress,
} from "./form.js";
import { bindTaken, refreshTaken } from "./takes.js";
import { onReveal, revealAll, revealAround, revealTarget, stopRevealing } from "./reveal.js";

const DEBOUNCE_MS = 120;
const LIVE_IDLE = () => t("Live: change any input to recompute in your browser.");
const REMEMBER_MS = 300;
const widgetState = new WeakMap();
const restoredPages = new WeakSet(); // the first widget of each page whose link was read
let rememberTimer = 0;
let shownPath = location.pathname; // the page on screen (Material pushes the next URL early)
// The page a Back or Forward navigation is bringing back, and the offset the reader
// left it at: read when the navigation starts, because the theme records the offset
// of the page on screen into the same history entry while the new one is swapped in.
let returning = { path: "", x: 0, y: -1 };

window.addEventListener("popstate", (event) => {
  const state = event.state;
  if (location.pathname !== shownPath) stopRevealing();
  returning = {
    path: location.pathname,
    x: state && typeof state.x === "number" ? state.x : 0,
    y: state && typeof state.y === "number" ? state.y : -1,
  };
});

function entryOf(widget) {
  let entry = widgetState.get(widget);
  if (!entry) {
    // seq: the latest request; stopped: the watchdog ended the last compute, so wait
    // for a new edit; baseline: pinned inputs for comparison; busy: a computation is in
    // the worker; again: inputs changed while it was, so compute once more after it.
    entry = { seq: 0, timer: 0, stopped: false, baseline: null, busy: false, again: false };
    widgetState.set(widget, entry);
  }
  return entry;
}

function allWidgets() {
  return Array.from(document.querySelectorAll("[data-calc]"));
}

function unavailable(widget) {
  widget.dataset.runtime = "failed";
  if (differsFromExample(widget)) widget.classList.add("bm-stale");
  setStatus(widget, t("Live recomputation is unavailable in this browser ({why}). The numbers shown were computed when the page was built, for the example inputs.", { why: runtimeFailure() }));
  setState(widget, "error");
}

// The runtime's download size, written by the build (bundle.install), which the worker
// reports as it starts (a dynamic import of the config here broke WebKit's first copy).
let downloadBytes = null;

/** The status while the runtime loads: what it costs, said before the reader waits. */
function loadingWords() {
  const bytes = downloadBytes;
  return bytes
    ? t("Loading the live runtime in the background (up to {mb} MB the first time, then cached); the numbers shown are the build's until it is ready.", { mb: (bytes / 1e6).toFixed(1) })
    : t("Loading the live runtime in the background; the numbers shown are the build's until it is ready.");
}

async function compute(widget) {
  const entry = entryOf(widget);
  // One computation per widget in the worker at a time. The worker answers in order, so
  // edits made while a slow one runs (a planner takes 0.1-0.5 s here) would each queue
  // a computation whose answer is thrown away, and the last edit would wait for all of
  // them; instead it is computed once, when the running one answers, with the inputs
  // as they are then.
  if (entry.busy) {
    entry.again = true; // schedule() has already marked the widget loading
    return;
  }
  entry.busy = true;
  entry.again = false;
  const seq = ++entry.seq;
  setState(widget, "loading");
  if (runtimeState() !== "ready") setStatus(widget, loadingWords());
  let answer;
  const inputs = readInputs(widget);
  try {
    answer = await ask("compute", { calc: widget.dataset.calc, inputs });
  } catch (err) {
    entry.busy = false;
    if (seq !== entry.seq) {
      // Older inputs failed (or ran away): the reader's latest still get their turn.
      if (entry.again && widget.isConnected) compute(widget);
      return;
    }
    if (err instanceof Runaway) {
      entry.stopped = true;
      showError(widget, { input: "calculator", message: err.message });
    } else {
      unavailable(widget);
    }
    return;
  }
  entry.busy = false;
  if (!widget.isConnected) return;
  if (seq !== entry.seq) {
    // The inputs changed meanwhile: compute them now if their turn came while this ran
    // (otherwise their debounce timer is still to fire and will).
    if (entry.again) compute(widget);
    return;
  }
  if (answer.ok) {
    entry.lastGood = inputs;
    entry.choice = null;
    const before = resultSnapshot(widget);
    applyResult(widget, answer.result);
    refreshTaken(widget);
    markSilent(widget, entry.edited, before === resultSnapshot(widget));
    entry.edited = null;
    if (entry.moved) {
      setStatus(widget, t("Live: recomputed. {moved}", { moved: entry.moved }));
      entry.moved = "";
    }
    if (entry.baseline) renderComparison(widget, entry.baseline);
  } else if (entry.choice && answer.error && answer.error.together
             && refuseChoice(widget, entry.choice, answer.error)) {
    entry.choice = null;
  } else {
    showError(widget, onEditedField(widget, entry, answer.error || {}));
  }
}

// Values that are each valid alone but refused together: the error belongs where the
// reader just typed, naming the input it clashes with (issue 37: editing the GPU count
// put the error under the global batch, and left the edited field's old echo).
function onEditedField(widget, entry, error) {
  const edited = entry.edited;
  if (!error.together || !edited || edited === error.input) return error;
  if (!widget.querySelector(`form [name="${CSS.escape(edited)}"]`)) return error;
  const other = labelOf(widget, String(error.input || ""));
  return { ...error, input: edited, message: t("Does not go with {other}: {message}", { other, message: error.message }) };
}

// What the reader typed, in the address bar (see form.js): Back and Forward restore it.
function remember() {
  clearTimeout(rememberTimer);
  rememberTimer = setTimeout(writeRemembered, REMEMBER_MS);
}

function writeRemembered() {
  clearTimeout(rememberTimer);
  rememberTimer = 0;
  // The address is already the next page's (a navigation has begun): these inputs
  // belong to the entry of the page being left, which only a write before it could reach.
  if (location.pathname !== shownPath) return;
  const entries = [];
  for (const widget of allWidgets()) {
    const keys = keysFor(widget);
    const key = keys[keys.length - 1];
    const example = exampleInputs(widget);
    entries.push([key, encodeWidget(widget, readInputs(widget), example)]);
    const { baseline } = entryOf(widget);
    if (baseline) entries.push([`${key}.base`, encodeWidget(widget, baseline, example)]);
  }
  rememberInAddress(entries, THEME_KEYS);
}

function schedule(widget, delay) {
  const entry = entryOf(widget);
  clearTimeout(entry.timer);
  entry.stopped = false;
  entry.seq += 1; // mark the change at once: nobody reads the old numbers as new
  setState(widget, "loading");
  if (delay === 0) compute(widget); // a submit or a choice: no reason to wait
  else entry.timer = setTimeout(() => compute(widget), delay);
  presetsEdited(widget);
  remember();
}

// A choice that the calculator refuses with the other inputs as they are (a topology
// too small for the cluster, a hierarchical algorithm for ranks that do not fill whole
// nodes): the select goes back to the choice that worked, the option is disabled with
// the calculator's reason, and the results (those of the restored inputs) stay. The
// option is offered again once another input changes.
function refuseChoice(widget, choice, error) {
  const select = widget.querySelector(`form select[name="${CSS.escape(choice.name)}"]`);
  const option = select && select.selectedOptions[0];
  if (!option || choice.previous === undefined || option.value === choice.previous) return false;
  const label = option.dataset.label || option.textContent;
  option.dataset.label = label;
  option.dataset.refused = "";
  option.disabled = true;
  const why = error.message || t("refused");
  option.textContent = t("{label} (not with these inputs: {why})", { label, why });
  select.value = choice.previous;
  conditionsChanged(widget);
  const kept = select.selectedOptions[0] ? select.selectedOptions[0].textContent : choice.previous;
  entryOf(widget).refused = true;
  clearErrors(widget);
  widget.classList.remove("bm-stale");
  setStatus(widget, `${labelOf(widget, choice.name)}: ${label} does not go with the other ` +
    `inputs (${error.message || "refused"}); kept ${kept}.`);
  setState(widget, "ready");
  remember();
  return true;
}

/** Offer refused options again (other inputs changed); ``except``: a select to skip. */
function clearRefusals(widget, except) {
  let cleared = true;
  for (const option of widget.querySelectorAll("form option[data-refused]")) {
    if (option.parentElement && option.parentElement.name === except) {
      cleared = false;
      continue;
    }
    delete option.dataset.refused;
    option.disabled = false;
    option.textContent = option.dataset.label;
  }
  if (hasConditions(widget)) applyConditions(widget);
  return cleared;
}

// A choice that made another one inapplicable moved it; the status line says so.
function conditionsChanged(widget) {
  if (!hasConditions(widget)) return;
  const changes = applyConditions(widget);
  if (changes.length) entryOf(widget).moved = changes.join(" ");
}

function bindTools(widget) {
  const tools = widget.querySelector("[data-tools]");
  if (!tools) return;
  tools.hidden = false;
  tools.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const entry = entryOf(widget);
    const action = button.dataset.action;
    try {
      if (action === "pin") {
        entry.baseline = readInputs(widget);
        widget.dataset.baseline = "pinned";
        remember();
        await renderComparison(widget, entry.baseline);
      } else if (action === "unpin") {
        entry.baseline = null;
        delete widget.dataset.baseline;
        remember();
        await renderComparison(widget, null);
      } else {
        await runAction(widget, action, entry.baseline);
      }
    } catch {
      unavailable(widget);
    }
  });
}

function bind(widget) {
  if (widget.dataset.bound === "1") return;
  widget.dataset.bound = "1";
  const form = widget.querySelector("form");
  if (!form) return;
  const isInput = (target) => target instanceof Element && target.hasAttribute("name");
  bindTaken(widget);
  const phoneMore = widget.querySelector("[data-phone-more]");
  if (phoneMore) {
    phoneMore.addEventListener("click", () => openPhoneFold(
      widget, phoneMore.getAttribute("aria-expanded") !== "true"));
  }
  form.addEventListener("input", (event) => {
    if (event.target instanceof HTMLSelectElement || !isInput(event.target)) return;
    const entry = entryOf(widget);
    entry.choice = null;
    entry.edited = event.target.getAttribute("name");
    if (entry.refused) entry.refused = !clearRefusals(widget, "");
    schedule(widget, DEBOUNCE_MS);
  });
  form.addEventListener("change", async (event) => {
    if (!(event.target instanceof HTMLSelectElement) || !isInput(event.target)) return;
    const entry = entryOf(widget);
    const { name } = event.target;
    entry.edited = name;
    // Remembered so that a choice the calculator refuses with these inputs can be
    // undone (see refuseChoice); only from valid inputs, or the error is the reader's.
    entry.choice = widget.dataset.state === "error" ? null
      : { name, previous: (entry.lastGood || exampleInputs(widget))[name] };
    if (entry.refused) entry.refused = !clearRefusals(widget, name);
    // A choice can make a folded input's value inapplicable: the modes apply to all.
    await addFoldedInputs(widget).catch(() => {});
    conditionsChanged(widget);
    schedule(widget, 0);
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    schedule(widget, 0);
  });
  // Enter in a field recomputes at once (a form of several fields and no submit button
  // has no implicit submission).
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.target instanceof HTMLInputElement)) return;
    event.preventDefault();
    schedule(widget, 0);
  });
  for (const type of ["focusin", "pointerenter", "touchstart"]) {
    widget.addEventListener(type, () => {
      startRuntime();
      addFoldedInputs(widget).catch(() => {}); // offline: the fold keeps its note
    }, { once: true, passive: true });
  }
  const fold = widget.querySelector("details[data-more]");
  if (fold) {
    fold.addEventListener("toggle", () => {
      if (fold.open) addFoldedInputs(widget).catch(() => {});
    });
  }
  bindTools(widget);
  bindHelp(widget);
  const applied = () => {
    entryOf(widget).choice = null;
    conditionsChanged(widget);
    schedule(widget, 0);
  };
  bindPresets(widget, applied);
  bindConfig(widget, ask, applied);
  const state = runtimeState();
  if (state === "ready") {
    widget.dataset.runtime = "ready";
    if (differsFromExample(widget)) compute(widget);
    else {
      setStatus(widget, LIVE_IDLE());
      setState(widget, "ready");
    }
  } else if (state === "failed") {
    unavailable(widget);
  }
}

onRuntime((state, detail) => {
  for (const widget of allWidgets()) {
    if (state === "failed") {
      unavailable(widget);
      continue;
    }
    widget.dataset.runtime = state;
    if (state === "loading" && detail && detail.bytes) downloadBytes = detail.bytes;
    if (state === "loading" && widget.dataset.state === "static") {
      setStatus(widget, loadingWords());
      continue;
    }
    if (state !== "ready") continue;
    // Widgets with an edit in flight get their answer from that request; a widget
    // still "static" shows its example, unless the browser restored other values.
    if (entryOf(widget).stopped || widget.dataset.state !== "static") continue;
    if (differsFromExample(widget)) compute(widget);
    else {
      setStatus(widget, LIVE_IDLE());
      setState(widget, "ready");
    }
  }
});

/** Does the address carry calculator inputs (not only the theme's search terms)? */
function carriesInputs() {
  return location.search.slice(1).split("&").some((part) => {
    if (!part) return false;
    try {
      return !THEME_KEYS.has(decodeURIComponent(part.split("=", 1)[0]));
    } catch {
      return true; // malformed: let the link's reader report it, with every widget there
    }
  });
}

function bindAll() {
  shownPath = location.pathname;
  // The theme wraps wide Markdown tables in a box that scrolls sideways on a narrow
  // screen: keyboard users must be able to reach it (axe: scrollable-region-focusable).
  for (const box of document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])")) {
    box.tabIndex = 0;
  }
  const back = returning;
  returning = { path: "", x: 0, y: -1 };
  if (back.path === location.pathname && back.y >= 0) {
    // Back or Forward: the offset the reader left only lands on the same place with
    // every widget at its real height. (The theme's own jump to an address's anchor
    // also fires popstate, with no offset: that is not a return.)
    revealAll();
    window.scrollTo(back.x, back.y);
  } else {
    if (carriesInputs()) revealAll(); // every widget a link's inputs may name is there
    revealTarget(); // an anchor in a widget the swap held in a lazy block (reveal.js)
  }
  revealAround();
  const widgets = allWidgets();
  widgets.forEach(bind);
  // Each page's content once: a link's inputs, or what Back or Forward brings back.
  if (widgets.length && !restoredPages.has(widgets[0]) && location.search) {
    restoredPages.add(widgets[0]);
    restoreFromLink(widgets, (widget, restored) => {
      if (restored.baseline) {
        const entry = entryOf(widget);
        entry.baseline = restored.baseline;
        widget.dataset.baseline = "pinned";
      } else {
        entryOf(widget).choice = null;
        conditionsChanged(widget);
        // A link that sets an input a phone folds shows it.
        const example = exampleInputs(widget);
        const inputs = readInputs(widget);
        if ([...widget.querySelectorAll("[data-phone-fold] [name]")]
          .some((control) => inputs[control.name] !== example[control.name])) {
          openPhoneFold(widget, true);
        }
        schedule(widget, 0);
      }
    }).catch(() => widgets.forEach(unavailable));
  }
}

/** The page a click on this link would leave for, or null (same page, other site). */
function leavingFor(event) {
  if (!(event.target instanceof Element)) return null;
  const link = event.target.closest("a[href]");
  if (!link) return null;
  const url = new URL(link.href, location.href);
  return url.origin === location.origin && url.pathname !== shownPath ? url : null;
}

// An edit made just before a click on a link is still waiting to be written to the
// address (remember): write it now, in the capture phase, before the theme pushes the
// next page's address, or Back would bring the page back without it.
window.addEventListener("click", (event) => {
  if (rememberTimer && leavingFor(event)) writeRemembered();
}, { capture: true });
// The same for the browser's Back and Forward: popstate comes only once the address is
// the other entry's, too late to write this one. The Navigation API's navigate event
// comes before (where there is one: Chromium; elsewhere such an edit is lost). Writing
// the address then cancels the traversal (Chromium does), so it is made again after.
if (typeof window.navigation?.addEventListener === "function") {
  window.navigation.addEventListener("navigate", (event) => {
    if (!rememberTimer || event.navigationType !== "traverse") return;
    const to = event.destination.index;
    const from = window.navigation.currentEntry?.index ?? -1;
    if (to < 0 || from < 0 || to === from) return; // an entry it cannot place: let it be
    writeRemembered();
    if (event.signal.aborted) setTimeout(() => history.go(to - from), 0);
  });
}

// Leaving the page through a link Material's instant navigation took over (it prevents
// the default): release focus first. The swap removes the focused element (the clicked
// link, or a field just edited) with the old content, and Blink then recalculates the
// style of the whole outgoing page (about 18 ms for the dense chapter on the bench
// machine) before the new one can be laid out. Focus ends on <body> either way. Blocks
// still deferred on the page being left stay so (see stopRevealing).
document.addEventListener("click", (event) => {
  if (!event.defaultPrevented || !leavingFor(event)) return;
  stopRevealing();
  const focused = document.activeElement;
  if (focused instanceof HTMLElement && focused !== document.body) {
    // A field's help shows in full while the field has focus: keep it so, or closing it
    // moves everything below and the page being left is laid out and painted once more
    // (15-25 ms for the dense chapter) while the next page's response waits.
    const help = focused.closest(".bm-field")?.querySelector("[data-help]");
    if (help) help.setAttribute("data-open", "");
    focused.blur();
  }
});

// The theme's search box is a dialog without a name (axe: aria-dialog-name); it stays
// in the page across instant navigation, so naming it once is enough.
const search = document.querySelector(".md-search[role='dialog']:not([aria-label])");
if (search) search.setAttribute("aria-label", t("Search"));

// A widget a lazy block brings in later (reveal.js) is bound then.
onReveal((element) => {
  const found = element.matches("[data-calc]") ? [element] : element.querySelectorAll("[data-calc]");
  found.forEach(bind);
});

// Material's instant navigation swaps the content without reloading this module:
// document$ fires for every page; binding is idempotent and the worker is kept.
if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
  window.document$.subscribe(bindAll);
} else if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", bindAll);
} else {
  bindAll();
}
