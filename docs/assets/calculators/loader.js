// Live calculators, main thread. The page already shows numbers computed at build
// time; this small module binds the forms and, on the first sign of interaction with
// a calculator (pointer over it, focus in it, a touch, an edit), starts one module
// Worker that hosts Pyodide and the calculators. Until then the page loads no runtime
// bytes at all: the pre-rendered numbers carry it.
// The main thread never runs Python, so the page never freezes. DOM text is written
// with textContent only: nothing a reader types or a URL carries becomes markup.

const WORKER_URL = new URL("./worker.js", import.meta.url);
const DEBOUNCE_MS = 120;
// A compute that has not answered by then is treated as runaway: the worker is ended
// and restarted so that one bad input can never leave the calculators dead.
const WATCHDOG_MS = window.__bmWatchdogMs || 10000;
// Loading that has not finished by then (a stalled network, a hung runtime) is
// reported as a failure; the pre-rendered numbers stay.
const LOAD_TIMEOUT_MS = 60000;
const SVG_NS = "http://www.w3.org/2000/svg";

const runtime = {
  worker: null,
  state: "idle", // idle | loading | ready | failed
  failure: "",
  nextId: 1,
  pending: new Map(),
};
const widgetState = new WeakMap();

function entryOf(widget) {
  let entry = widgetState.get(widget);
  if (!entry) {
    // stopped: the watchdog ended this widget's last compute; wait for a new edit.
    entry = { seq: 0, timer: 0, queued: false, stopped: false };
    widgetState.set(widget, entry);
  }
  return entry;
}

function allWidgets() {
  return Array.from(document.querySelectorAll("[data-calc]"));
}

function setStatus(widget, text) {
  const status = widget.querySelector("[data-status]");
  if (status) status.textContent = text;
}

function setState(widget, state) {
  widget.dataset.state = state;
}

function readInputs(widget) {
  const inputs = {};
  for (const control of widget.querySelectorAll("form [name]")) {
    inputs[control.name] = control.value;
  }
  return inputs;
}

function differsFromExample(widget) {
  let example = {};
  try {
    example = JSON.parse(widget.dataset.example || "{}");
  } catch {
    return true;
  }
  const inputs = readInputs(widget);
  return Object.keys(inputs).some((name) => inputs[name] !== (example[name] ?? ""));
}

function clearErrors(widget) {
  for (const slot of widget.querySelectorAll("[data-error-for]")) {
    slot.textContent = "";
    slot.hidden = true;
  }
  for (const control of widget.querySelectorAll("[aria-invalid]")) {
    control.removeAttribute("aria-invalid");
  }
}

function showError(widget, error) {
  clearErrors(widget);
  const name = String(error.input || "");
  const slot = Array.from(widget.querySelectorAll("[data-error-for]")).find(
    (el) => el.dataset.errorFor === name,
  );
  const message = String(error.message || "invalid value");
  if (slot) {
    slot.textContent = message;
    slot.hidden = false;
    const control = widget.querySelector(`form [name="${CSS.escape(name)}"]`);
    if (control) control.setAttribute("aria-invalid", "true");
    setStatus(widget, `Check ${name}: the results below are from the last valid inputs.`);
  } else {
    setStatus(widget, `${message} The results below are from the last valid inputs.`);
  }
  widget.classList.add("bm-stale");
  setState(widget, "error");
}

function listItems(list, lines) {
  if (!list) return;
  list.replaceChildren(
    ...lines.map((line) => {
      const li = document.createElement("li");
      li.textContent = String(line);
      return li;
    }),
  );
}

function buildTable(holder, table) {
  if (!holder) return;
  if (!table) {
    holder.replaceChildren();
    return;
  }
  const el = document.createElement("table");
  if (table.caption) {
    const caption = document.createElement("caption");
    caption.textContent = table.caption;
    el.append(caption);
  }
  const head = el.createTHead().insertRow();
  for (const column of table.columns) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = column;
    head.append(th);
  }
  const body = el.createTBody();
  for (const row of table.rows) {
    const tr = body.insertRow();
    for (const cell of row) tr.insertCell().textContent = cell;
  }
  holder.replaceChildren(el);
}

// Charts are SVG made by our own Python (labels XML-escaped there). Parse them as XML,
// never as HTML, and drop anything executable as a second line of defence.
function drawChart(holder, svgText) {
  if (!holder) return;
  if (!svgText) {
    holder.replaceChildren();
    return;
  }
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.namespaceURI !== SVG_NS || doc.querySelector("parsererror")) return;
  for (const bad of svg.querySelectorAll("script, foreignObject")) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of Array.from(el.attributes)) {
      if (/^on/i.test(attr.name) || /^\s*javascript:/i.test(attr.value)) el.removeAttribute(attr.name);
    }
  }
  holder.replaceChildren(document.importNode(svg, true));
}

function applyResult(widget, result) {
  for (const cell of widget.querySelectorAll("[data-output]")) {
    const output = result.outputs[cell.dataset.output];
    if (!output) continue;
    cell.textContent = output.text;
    cell.dataset.value = output.raw;
    cell.title = `${output.raw} ${output.unit}`.trim();
  }
  listItems(widget.querySelector("[data-warnings]"), result.warnings || []);
  listItems(widget.querySelector("[data-notes]"), result.notes || []);
  buildTable(widget.querySelector("[data-table]"), result.table);
  drawChart(widget.querySelector("[data-chart]"), result.chart);
  clearErrors(widget);
  widget.classList.remove("bm-stale");
  if (performance.getEntriesByName("bm:first-live").length === 0) performance.mark("bm:first-live");
  setStatus(widget, "Live: recomputed in your browser.");
  setState(widget, "ready");
}

function failRuntime(message) {
  runtime.state = "failed";
  runtime.failure = message;
  if (runtime.worker) runtime.worker.terminate();
  runtime.worker = null;
  runtime.pending.clear();
  for (const widget of allWidgets()) {
    widget.dataset.runtime = "failed";
    if (differsFromExample(widget)) widget.classList.add("bm-stale");
    setStatus(
      widget,
      "Live recomputation is unavailable in this browser (" + message + "). " +
        "The numbers shown were computed when the page was built, for the example inputs.",
    );
    setState(widget, "error");
  }
}

function onWorkerMessage(event) {
  const message = event.data || {};
  if (message.type === "ready") {
    runtime.state = "ready";
    performance.mark("bm:runtime-ready");
    for (const widget of allWidgets()) {
      widget.dataset.runtime = "ready";
      const entry = entryOf(widget);
      if (entry.stopped) {
        widget.dataset.runtime = "ready";
      } else if (entry.queued || differsFromExample(widget)) {
        entry.queued = false;
        request(widget);
      } else if (widget.dataset.state === "static") {
        setStatus(widget, "Live: change any input to recompute in your browser.");
        setState(widget, "ready");
      }
    }
  } else if (message.type === "failed") {
    failRuntime(String(message.message || "the runtime could not start"));
  } else if (message.type === "result") {
    const pending = runtime.pending.get(message.id);
    runtime.pending.delete(message.id);
    if (pending) clearTimeout(pending.watchdog);
    if (!pending || !pending.widget.isConnected) return;
    if (pending.seq !== entryOf(pending.widget).seq) return; // a newer request is on its way
    if (message.ok) applyResult(pending.widget, message.result);
    else showError(pending.widget, message.error || {});
  }
}

function startRuntime() {
  if (runtime.state !== "idle") return;
  runtime.state = "loading";
  for (const widget of allWidgets()) widget.dataset.runtime = "loading";
  try {
    runtime.worker = new Worker(WORKER_URL, { type: "module" });
  } catch (err) {
    failRuntime(String(err && err.message ? err.message : err));
    return;
  }
  runtime.worker.addEventListener("message", onWorkerMessage);
  const worker = runtime.worker;
  setTimeout(() => {
    if (runtime.worker === worker && runtime.state === "loading") {
      failRuntime(`the runtime did not load within ${LOAD_TIMEOUT_MS / 1000} s`);
    }
  }, LOAD_TIMEOUT_MS);
  runtime.worker.addEventListener("error", (event) => {
    event.preventDefault();
    failRuntime(event.message || "the runtime's files could not be loaded");
  });
}

function request(widget) {
  const entry = entryOf(widget);
  entry.seq += 1;
  if (runtime.state === "failed") {
    failRuntime(runtime.failure);
    return;
  }
  setState(widget, "loading");
  if (runtime.state !== "ready") {
    entry.queued = true;
    setStatus(widget, "Starting the live runtime…");
    startRuntime();
    return;
  }
  const id = runtime.nextId++;
  const watchdog = setTimeout(() => runaway(id), WATCHDOG_MS);
  runtime.pending.set(id, { widget, seq: entry.seq, watchdog });
  runtime.worker.postMessage({ type: "compute", id, calc: widget.dataset.calc, inputs: readInputs(widget) });
}

function runaway(id) {
  const pending = runtime.pending.get(id);
  if (!pending) return;
  for (const other of runtime.pending.values()) clearTimeout(other.watchdog);
  const waiting = Array.from(runtime.pending.values(), (p) => p.widget);
  runtime.pending.clear();
  if (runtime.worker) runtime.worker.terminate();
  runtime.worker = null;
  runtime.state = "idle";
  entryOf(pending.widget).stopped = true;
  showError(pending.widget, {
    input: "calculator",
    message: `This computation ran for more than ${WATCHDOG_MS / 1000} s and was stopped; ` +
      "the live runtime is restarting. Try smaller inputs.",
  });
  for (const widget of waiting) if (widget !== pending.widget) entryOf(widget).queued = true;
  startRuntime();
}

function schedule(widget, delay) {
  const entry = entryOf(widget);
  clearTimeout(entry.timer);
  entry.stopped = false;
  // Mark the change at once so nobody reads the old numbers as the new result.
  entry.seq += 1;
  setState(widget, "loading");
  entry.timer = setTimeout(() => request(widget), delay);
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
  const warm = () => startRuntime();
  for (const type of ["focusin", "pointerenter", "touchstart"]) {
    widget.addEventListener(type, warm, { once: true, passive: true });
  }
  if (runtime.state === "ready") {
    widget.dataset.runtime = "ready";
    if (differsFromExample(widget)) request(widget);
    else {
      setStatus(widget, "Live: change any input to recompute in your browser.");
      setState(widget, "ready");
    }
  } else if (runtime.state === "failed") {
    failRuntime(runtime.failure);
  }
}

function bindAll() {
  allWidgets().forEach(bind);
}

// Material's instant navigation swaps the content without reloading this module:
// document$ fires for every page; binding is idempotent and the worker is kept.
if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
  window.document$.subscribe(bindAll);
} else if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", bindAll);
} else {
  bindAll();
}
