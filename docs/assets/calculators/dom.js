// Writing results into a widget. Text goes in with textContent only; tables are built
// element by element; charts (SVG from our own Python, labels escaped there) are parsed
// as XML, never as HTML, and stripped of anything executable.
//
// Only what changed is written: a recompute usually changes a few numbers, and every
// node rewritten with the same text is restyled and laid out again by the browser on
// the main thread (make bench: recompute p50 6.1 -> 3.8 ms with the busy delay below).

import { t } from "./language.js";
const SVG_NS = "http://www.w3.org/2000/svg";

export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function setStatus(widget, text) {
  const status = widget.querySelector("[data-status]");
  if (status) setText(status, text);
}

// A recompute answers in a few milliseconds; a busy sign shown at once would flicker and
// cost a frame of style, layout and paint while the worker computes. So the sign
// (data-busy, styled in calculators.css) appears only if the answer takes longer.
const BUSY_AFTER_MS = 150;
const busyTimers = new WeakMap();

export function setState(widget, state) {
  if (widget.dataset.state !== state) widget.dataset.state = state;
  clearTimeout(busyTimers.get(widget));
  if (state === "loading") {
    busyTimers.set(widget, setTimeout(() => {
      if (widget.dataset.state === "loading") widget.dataset.busy = "";
    }, BUSY_AFTER_MS));
  } else if (widget.hasAttribute("data-busy")) {
    delete widget.dataset.busy;
  }
}

/** Every input's text: the form's, and the example's for the folded inputs not added
 * yet (form.js adds them on demand; until then they hold the example's values). */
export function readInputs(widget) {
  const inputs = widget.querySelector("[data-more='pending']") ? exampleInputs(widget) : {};
  for (const control of widget.querySelectorAll("form [name]")) inputs[control.name] = control.value;
  return inputs;
}

export function writeInputs(widget, inputs) {
  for (const control of widget.querySelectorAll("form [name]")) {
    if (Object.hasOwn(inputs, control.name)) control.value = String(inputs[control.name]);
  }
}

export function exampleInputs(widget) {
  try {
    return JSON.parse(widget.dataset.example || "{}");
  } catch {
    return {};
  }
}

export function differsFromExample(widget) {
  const example = exampleInputs(widget);
  const inputs = readInputs(widget);
  return Object.keys(inputs).some((name) => inputs[name] !== (example[name] ?? ""));
}

export function clearErrors(widget) {
  for (const slot of widget.querySelectorAll("[data-error-for]")) {
    if (slot.hidden) continue;
    slot.textContent = "";
    slot.hidden = true;
  }
  for (const control of widget.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
}

// A field's error line is made the first time the field has an error (most never do:
// made up front, the lines were 9% of a chapter's HTML), then kept and hidden when the
// error is fixed. The control names it in aria-describedby, after its help.
function errorSlot(widget, name) {
  const control = widget.querySelector(`form [name="${CSS.escape(name)}"]`);
  const field = control && control.closest("[data-field]");
  if (!field) return null;
  let slot = field.querySelector("[data-error-for]");
  if (!slot) {
    slot = document.createElement("span");
    slot.className = "bm-error";
    slot.id = `${control.id}-error`;
    slot.dataset.errorFor = name;
    slot.setAttribute("role", "alert");
    slot.hidden = true;
    field.append(slot);
    const described = (control.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    control.setAttribute("aria-describedby", [...described, slot.id].join(" "));
  }
  return slot;
}

/** The label a reader sees for an input (its unit included), or its name. */
export function labelOf(widget, name) {
  const field = Array.from(widget.querySelectorAll("[data-field]")).find(
    (el) => el.dataset.field === name,
  );
  const label = field && field.querySelector("label");
  return label ? label.textContent.replace(/\s+/g, " ").trim() : name;
}

/** Show (or hide) the inputs a phone folds behind "Show N more inputs". */
export function openPhoneFold(widget, open) {
  const form = widget.querySelector("form");
  const button = widget.querySelector("[data-phone-more]");
  if (!form || !button) return;
  form.toggleAttribute("data-phone-open", open);
  button.setAttribute("aria-expanded", String(open));
  setText(button, open ? t("Show fewer inputs") : button.dataset.moreLabel);
}

export function showError(widget, error) {
  clearErrors(widget);
  const name = String(error.input || "");
  const slot = errorSlot(widget, name);
  const message = String(error.message || "invalid value");
  if (slot) {
    slot.textContent = message;
    slot.hidden = false;
    const folded = slot.closest("details");
    if (folded) folded.open = true;
    if (slot.closest("[data-phone-fold]")) openPhoneFold(widget, true);
    const control = widget.querySelector(`form [name="${CSS.escape(name)}"]`);
    if (control) control.setAttribute("aria-invalid", "true");
    // The echo under the field described the last valid value, not what it holds now.
    const echo = Array.from(widget.querySelectorAll("[data-parsed-for]")).find(
      (el) => el.dataset.parsedFor === name,
    );
    if (echo) setText(echo, "");
    const field = slot.closest("[data-field]");
    const label = labelOf(widget, name);
    setStatus(widget, field && field.hidden
      ? t("Check {label} (an input of another mode, now hidden): the results shown are from the last valid inputs.", { label })
      : t("Check {label}: the results shown are from the last valid inputs.", { label }));
  } else {
    setStatus(widget, t("{message} The results shown are from the last valid inputs.", { message }));
  }
  widget.classList.add("bm-stale");
  setState(widget, "error");
}

export function showNotices(widget, notices) {
  const box = widget.querySelector("[data-notice]");
  if (!box) return;
  const existing = Array.from(box.querySelectorAll("li"), (li) => li.textContent);
  const lines = [...existing, ...notices.map(String)];
  box.replaceChildren();
  if (!lines.length) {
    box.hidden = true;
    return;
  }
  const list = document.createElement("ul");
  for (const line of lines) {
    const li = document.createElement("li");
    li.textContent = line;
    list.append(li);
  }
  box.append(list);
  box.hidden = false;
}

function listItems(list, lines) {
  if (!list) return;
  const texts = lines.map(String);
  const shown = Array.from(list.children, (li) => li.textContent);
  if (shown.length === texts.length && shown.every((t, i) => t === texts[i])) return;
  list.replaceChildren(
    ...lines.map((line) => {
      const li = document.createElement("li");
      li.textContent = String(line);
      return li;
    }),
  );
}

// What each table or chart holder shows now, as JSON: redrawn only when it differs.
const drawn = new WeakMap();
function unchanged(holder, value) {
  const key = JSON.stringify(value ?? null);
  if (drawn.get(holder) === key) return true;
  drawn.set(holder, key);
  return false;
}

/** A table's caption twice: in the table for assistive technology (visually hidden),
 * and as a line above it that stays in view while the table scrolls sideways (issue
 * 37: on a phone, captions of wide tables were cut inside their scroll box). Returns
 * the elements to put before the table. */
export function captionAbove(tableEl, text) {
  if (!text) return [];
  const caption = document.createElement("caption");
  caption.className = "bm-sr";
  caption.textContent = text;
  tableEl.append(caption);
  const line = document.createElement("p");
  line.className = "bm-table-caption";
  line.setAttribute("aria-hidden", "true");
  line.textContent = text;
  return [line];
}

export function buildTable(holder, table) {
  if (!holder || unchanged(holder, table)) return;
  if (!table) {
    holder.replaceChildren();
    for (const name of ["tabindex", "role", "aria-label"]) holder.removeAttribute(name);
    return;
  }
  // A table wider than a phone scrolls in its box, which keyboard users must reach.
  holder.tabIndex = 0;
  holder.setAttribute("role", "region");
  holder.setAttribute("aria-label", table.caption || t("Details"));
  const el = document.createElement("table");
  el.className = "bm-table";
  const shown = captionAbove(el, table.caption);
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
  holder.replaceChildren(...shown, el);
}

// A chart is one SVG document holding a layout per width (calculators.core.charts):
// each goes into its holder, and the stylesheet shows the one that fits the column.
function drawChart(widget, svgText) {
  const holders = { wide: widget.querySelector("[data-chart]"), narrow: widget.querySelector("[data-chart-narrow]") };
  if (!holders.wide || unchanged(holders.wide, svgText)) return;
  const layouts = { wide: null, narrow: null };
  if (svgText) {
    const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.namespaceURI !== SVG_NS || doc.querySelector("parsererror")) return;
    for (const bad of svg.querySelectorAll("script, foreignObject")) bad.remove();
    for (const el of [svg, ...svg.querySelectorAll("*")]) {
      for (const attr of Array.from(el.attributes)) {
        if (/^on/i.test(attr.name) || /^\s*javascript:/i.test(attr.value)) el.removeAttribute(attr.name);
      }
    }
    const parts = Array.from(svg.children).filter((el) => el.dataset && el.dataset.layout);
    if (!parts.length) layouts.wide = svg;
    for (const part of parts) {
      part.removeAttribute("display");
      layouts[part.dataset.layout] = part;
    }
  }
  for (const [name, holder] of Object.entries(holders)) {
    if (!holder) continue;
    if (layouts[name]) holder.replaceChildren(document.importNode(layouts[name], true));
    else holder.replaceChildren();
  }
}

// The headline outputs: the sticky summary, and one short polite announcement when
// they change (the results block itself is not a live region).
const announced = new WeakMap();
const announceTimers = new WeakMap();
const ANNOUNCE_AFTER_MS = 500;
function itemText(item) {
  const label = item.querySelector(".bm-summary__label");
  const value = item.querySelector("[data-headline-value]");
  return `${label ? label.textContent : ""} ${value ? value.textContent : ""}`.trim();
}

function headlineText(widget) {
  return Array.from(widget.querySelectorAll("[data-headline]:not([hidden])"), itemText).join("; ");
}

function updateHeadline(widget, outputs) {
  if (!announced.has(widget)) announced.set(widget, headlineText(widget));
  const parts = [];
  for (const item of widget.querySelectorAll("[data-headline]")) {
    const output = outputs[item.dataset.headline];
    if (!output) continue;
    const value = item.querySelector("[data-headline-value]");
    if (value) setText(value, output.text);
    const absent = output.raw === "";
    if (item.hidden !== absent) item.hidden = absent;
    if (!absent) parts.push(itemText(item));
  }
  const text = parts.join("; ");
  const region = widget.querySelector("[data-announce]");
  if (!region || announced.get(widget) === text) return;
  announced.set(widget, text);
  // Said once the numbers settle, not at every keystroke's recompute, and out of the
  // recompute's own frame.
  clearTimeout(announceTimers.get(widget));
  announceTimers.set(widget, setTimeout(() => setText(region, `${announced.get(widget)}.`),
    ANNOUNCE_AFTER_MS));
}

/** What a reader can see of a result: every output's raw value, the warnings, notes and
 * table. Equal before and after a recompute: the edit changed nothing on screen. */
export function resultSnapshot(widget) {
  const values = Array.from(widget.querySelectorAll("[data-output]"), (el) => el.dataset.value);
  const texts = ["[data-warnings]", "[data-notes]", "[data-table]"].map(
    // Without white space: the build's markup and the live one differ only in that.
    (sel) => (widget.querySelector(sel) || { textContent: "" }).textContent.replace(/\s+/g, ""));
  return JSON.stringify([values, texts]);
}

/** Say beside the field just edited that the edit changed no result (issue 37: an input
 * that does nothing under the other inputs was indistinguishable from a live one). */
export function markSilent(widget, name, silent) {
  for (const old of widget.querySelectorAll("[data-silent-for]")) old.remove();
  if (!silent || !name) return;
  const field = Array.from(widget.querySelectorAll("[data-field]")).find(
    (el) => el.dataset.field === name);
  if (!field) return;
  const note = document.createElement("small");
  note.className = "bm-silent";
  note.dataset.silentFor = name;
  note.textContent = t("No result changed: with the other inputs as they are, this one does not decide the answer.");
  const help = field.querySelector("[data-help]");
  if (help) help.before(note);
  else field.append(note);
}

export function applyResult(widget, result) {
  for (const cell of widget.querySelectorAll("[data-output]")) {
    const output = result.outputs[cell.dataset.output];
    if (!output) continue;
    setText(cell, output.text);
    if (cell.dataset.value !== output.raw) cell.dataset.value = output.raw;
    // An output that does not apply to these inputs (n/a) is not shown at all.
    const row = cell.closest("tr");
    if (row && row.hidden !== (output.raw === "")) row.hidden = output.raw === "";
    const title = `${output.raw} ${output.unit}`.trim();
    if (cell.title !== title) cell.title = title;
  }
  for (const hint of widget.querySelectorAll("[data-parsed-for]")) {
    setText(hint, (result.parsed || {})[hint.dataset.parsedFor] || "");
  }
  listItems(widget.querySelector("[data-warnings]"), result.warnings || []);
  listItems(widget.querySelector("[data-notes]"), result.notes || []);
  buildTable(widget.querySelector("[data-table]"), result.table);
  drawChart(widget, result.chart);
  updateHeadline(widget, result.outputs);
  clearErrors(widget);
  if (widget.classList.contains("bm-stale")) widget.classList.remove("bm-stale");
  if (performance.getEntriesByName("bm:first-live").length === 0) performance.mark("bm:first-live");
  setStatus(widget, t("Live: recomputed in your browser."));
  setState(widget, "ready");
}
