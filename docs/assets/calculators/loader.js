// Live calculators, main thread. The page already shows numbers computed at build
// time; this module binds the forms and, on the first sign of interaction with a
// calculator (pointer over it, focus in it, a touch, an edit) or a link that carries
// inputs, starts the runtime: one module Worker hosting Pyodide and the calculators.
// Until then the page loads no runtime bytes: the pre-rendered numbers carry it. The
// main thread never runs Python, so the page never freezes.

import { ask, onRuntime, Runaway, runtimeFailure, runtimeState, startRuntime } from "./runtime.js";
import {
  applyResult, differsFromExample, readInputs, setState, setStatus, showError, writeInputs,
} from "./dom.js";
import { renderComparison, restoreFromLink, runAction } from "./share.js";

const DEBOUNCE_MS = 120;
const LIVE_IDLE = "Live: change any input to recompute in your browser.";
const widgetState = new WeakMap();
let restoredHref = "";
let shownPath = location.pathname; // the page on screen (Material pushes the next URL early)

function entryOf(widget) {
  let entry = widgetState.get(widget);
  if (!entry) {
    // seq: the latest request; stopped: the watchdog ended the last compute, so wait
    // for a new edit; baseline: pinned inputs for comparison.
    entry = { seq: 0, timer: 0, stopped: false, baseline: null };
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
  setStatus(widget, `Live recomputation is unavailable in this browser (${runtimeFailure()}). ` +
    "The numbers shown were computed when the page was built, for the example inputs.");
  setState(widget, "error");
}

async function compute(widget) {
  const entry = entryOf(widget);
  const seq = ++entry.seq;
  setState(widget, "loading");
  if (runtimeState() !== "ready") setStatus(widget, "Starting the live runtime…");
  let answer;
  try {
    answer = await ask("compute", { calc: widget.dataset.calc, inputs: readInputs(widget) });
  } catch (err) {
    if (seq !== entry.seq) return;
    if (err instanceof Runaway) {
      entry.stopped = true;
      showError(widget, { input: "calculator", message: err.message });
    } else {
      unavailable(widget);
    }
    return;
  }
  if (seq !== entry.seq || !widget.isConnected) return; // a newer request is on its way
  if (answer.ok) {
    applyResult(widget, answer.result);
    if (entry.baseline) renderComparison(widget, entry.baseline);
  } else {
    showError(widget, answer.error || {});
  }
}

function schedule(widget, delay) {
  const entry = entryOf(widget);
  clearTimeout(entry.timer);
  entry.stopped = false;
  entry.seq += 1; // mark the change at once: nobody reads the old numbers as new
  setState(widget, "loading");
  if (delay === 0) compute(widget); // a submit or a choice: no reason to wait
  else entry.timer = setTimeout(() => compute(widget), delay);
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
        await renderComparison(widget, entry.baseline);
      } else if (action === "unpin") {
        entry.baseline = null;
        delete widget.dataset.baseline;
        await renderComparison(widget, null);
      } else {
        await runAction(widget, action, entry.baseline);
      }
    } catch {
      unavailable(widget);
    }
  });
  const presets = widget.querySelector("select[data-preset]");
  if (presets) {
    presets.addEventListener("change", () => {
      const option = presets.selectedOptions[0];
      if (!option || !option.dataset.texts) return;
      writeInputs(widget, JSON.parse(option.dataset.texts));
      presets.value = "";
      schedule(widget, 0);
    });
  }
}

function bind(widget) {
  if (widget.dataset.bound === "1") return;
  widget.dataset.bound = "1";
  const form = widget.querySelector("form");
  if (!form) return;
  form.addEventListener("input", (event) => {
    if (event.target instanceof HTMLSelectElement) return;
    schedule(widget, DEBOUNCE_MS);
  });
  form.addEventListener("change", (event) => {
    if (event.target instanceof HTMLSelectElement) schedule(widget, 0);
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    schedule(widget, 0);
  });
  for (const type of ["focusin", "pointerenter", "touchstart"]) {
    widget.addEventListener(type, () => startRuntime(), { once: true, passive: true });
  }
  bindTools(widget);
  const state = runtimeState();
  if (state === "ready") {
    widget.dataset.runtime = "ready";
    if (differsFromExample(widget)) compute(widget);
    else {
      setStatus(widget, LIVE_IDLE);
      setState(widget, "ready");
    }
  } else if (state === "failed") {
    unavailable(widget);
  }
}

onRuntime((state) => {
  for (const widget of allWidgets()) {
    if (state === "failed") {
      unavailable(widget);
      continue;
    }
    widget.dataset.runtime = state;
    if (state !== "ready") continue;
    // Widgets with an edit in flight get their answer from that request; a widget
    // still "static" shows its example, unless the browser restored other values.
    if (entryOf(widget).stopped || widget.dataset.state !== "static") continue;
    if (differsFromExample(widget)) compute(widget);
    else {
      setStatus(widget, LIVE_IDLE);
      setState(widget, "ready");
    }
  }
});

function bindAll() {
  shownPath = location.pathname;
  const widgets = allWidgets();
  widgets.forEach(bind);
  if (widgets.length && location.href !== restoredHref && location.search) {
    restoredHref = location.href;
    restoreFromLink(widgets, (widget, restored) => {
      if (restored.baseline) {
        const entry = entryOf(widget);
        entry.baseline = restored.baseline;
        widget.dataset.baseline = "pinned";
      } else {
        schedule(widget, 0);
      }
    }).catch(() => widgets.forEach(unavailable));
  }
}

// Leaving the page through a link Material's instant navigation took over (it prevents
// the default): release focus first. The swap removes the focused element (the clicked
// link, or a field just edited) with the old content, and Blink then recalculates the
// style of the whole outgoing page (about 18 ms for the dense chapter on the bench
// machine) before the new one can be laid out. Focus ends on <body> either way.
document.addEventListener("click", (event) => {
  if (!event.defaultPrevented || !(event.target instanceof Element)) return;
  const link = event.target.closest("a[href]");
  if (!link) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin || url.pathname === shownPath) return;
  const focused = document.activeElement;
  if (focused instanceof HTMLElement && focused !== document.body) focused.blur();
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
