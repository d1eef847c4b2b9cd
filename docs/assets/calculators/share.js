// Links that carry a calculator's inputs, copying results (Markdown, JSON, command
// line), and comparing against a pinned baseline. Links are untrusted input: the
// query is parsed by hand (no "+"-as-space surprises), sizes are capped, and every
// value is validated by the calculators themselves before it reaches a field.

import { t } from "./language.js";
import { ask } from "./runtime.js";
import {
  captionAbove, exampleInputs, readInputs, setState, setStatus, showNotices, writeInputs,
} from "./dom.js";
import { addFoldedInputs } from "./form.js";
import { firstOf } from "./reveal.js";

const MAX_QUERY = 16000;
// Query keys that belong to the theme (search highlighting), not to calculators.
export const THEME_KEYS = new Set(["q", "h"]);
// How long "Link copied." and the like stay on screen.
const COPY_STATUS_MS = 4000;
const copyTimers = new WeakMap();

/** The keys a widget answers to: its id, and its calculator's id if it is the first. */
export function keysFor(widget) {
  // The first in the page, counting widgets still held in lazy blocks (reveal.js).
  return firstOf(widget.dataset.calc) === widget ? [widget.id, widget.dataset.calc] : [widget.id];
}

function linkKey(widget) {
  const keys = keysFor(widget);
  return keys[keys.length - 1];
}

function parseQuery() {
  const entries = new Map();
  const notices = [];
  const query = location.search.slice(1);
  if (query.length > MAX_QUERY) {
    notices.push(t("The link's query is longer than {max} characters and was ignored.", { max: MAX_QUERY }));
    return { entries, notices };
  }
  for (const part of query.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    let key;
    try {
      key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    } catch {
      notices.push(t("Ignored a malformed part of the link."));
      continue;
    }
    if (!entries.has(key)) entries.set(key, []);
    entries.get(key).push(eq < 0 ? "" : part.slice(eq + 1));
  }
  return { entries, notices };
}

/** Restore inputs (and baselines) from the address; calls back per restored widget. */
export async function restoreFromLink(widgets, onRestored) {
  const { entries, notices } = parseQuery();
  if (!entries.size && !notices.length) return;
  const used = new Set();
  const jobs = [];
  for (const widget of widgets) {
    for (const suffix of [".base", ""]) {
      const key = keysFor(widget).find((k) => entries.has(k + suffix));
      if (key === undefined) continue;
      used.add(key + suffix);
      const values = entries.get(key + suffix);
      const local = values.length > 1 ? [t("Ignored a repeated {key} in the link (the first is used).", { key: key + suffix })] : [];
      jobs.push({ widget, baseline: suffix === ".base", state: values[0], local });
    }
  }
  for (const key of entries.keys()) {
    if (!used.has(key) && !THEME_KEYS.has(key)) {
      notices.push(t("Ignored \"{key}\" in the link: no calculator on this page is called so.", { key: key.slice(0, 40) }));
    }
  }
  if (notices.length && widgets.length) showNotices(widgets[0], notices);
  // A widget whose values come from the link is not live until they are in: otherwise
  // the runtime's start marks it ready, for a moment, with the example's numbers.
  for (const job of jobs) {
    if (job.baseline) continue;
    setState(job.widget, "loading");
    setStatus(job.widget, t("Restoring the inputs from the link…"));
  }
  for (const job of jobs) {
    const answer = await ask("decode", { calc: job.widget.dataset.calc, state: job.state.slice(0, MAX_QUERY) });
    const found = answer.ok ? answer : { inputs: {}, notices: [answer.error.message] };
    showNotices(job.widget, [...job.local, ...found.notices]);
    const inputs = { ...exampleInputs(job.widget), ...found.inputs };
    if (job.baseline) {
      onRestored(job.widget, { baseline: inputs });
    } else {
      // The link may set a folded input: add them first.
      await addFoldedInputs(job.widget).catch(() => showNotices(job.widget, [
        t("The folded inputs could not be loaded: the link's values for them are not applied.")]));
      writeInputs(job.widget, inputs);
      onRestored(job.widget, {});
    }
  }
}

/** The text a copy button was to copy could not be made (the runtime's error). */
export class CopyRefused extends Error {}

// Copying needs the click's user activation. WebKit (Safari, WebKitGTK) ends it at the
// first wait: a clipboard write made after the text comes back from the worker is
// refused with NotAllowedError, and on a page's first copy that wait is the runtime's
// start (seconds). So the write is started within the click, before any wait, with the
// text still on its way: a ClipboardItem holding a Promise (Safari's own answer to this;
// Chromium takes it too). Where there is no ClipboardItem, writeText once the text is
// in, then the old textarea + execCommand("copy"); if all fail, the status line says so
// (role=status: announced) and the text is shown, selected, for a manual copy.
function startClipboardWrite(textPromise) {
  if (!window.isSecureContext || !navigator.clipboard || typeof navigator.clipboard.write !== "function"
      || typeof window.ClipboardItem !== "function") return null;
  try {
    const blob = textPromise.then((text) => new Blob([text], { type: "text/plain" }));
    blob.catch(() => {});
    const write = navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
    write.catch(() => {}); // judged once the text is in (copyText)
    return write;
  } catch {
    return null;
  }
}

function copyWithExecCommand(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.setAttribute("aria-hidden", "true");
  area.style.cssText = "position:fixed;top:0;left:0;width:1px;height:1px;opacity:0;";
  const focused = document.activeElement;
  document.body.append(area);
  area.select();
  let done = false;
  try {
    done = document.execCommand("copy");
  } catch {
    done = false;
  }
  area.remove();
  if (focused instanceof HTMLElement) focused.focus({ preventScroll: true });
  return done;
}

/** Copy the text ``textPromise`` resolves to; call within the click, before any await. */
async function copyText(widget, what, textPromise) {
  const status = widget.querySelector("[data-copy-status]");
  const box = widget.querySelector("[data-copy-box]");
  const write = startClipboardWrite(textPromise);
  clearTimeout(copyTimers.get(widget));
  let text;
  try {
    text = await textPromise;
  } catch (err) {
    if (status) {
      status.textContent = err instanceof CopyRefused ? err.message
        : t("Nothing was copied: the live runtime is unavailable.");
    }
    if (err instanceof CopyRefused) return;
    throw err;
  }
  let copied = false;
  let reason = "";
  if (write) {
    try {
      await write;
      copied = true;
    } catch (err) {
      reason = err && err.name ? err.name : "";
    }
  }
  if (!copied && navigator.clipboard && typeof navigator.clipboard.writeText === "function") {
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch (err) {
      reason = reason || (err && err.name ? err.name : "");
    }
  }
  if (!copied) copied = copyWithExecCommand(text);
  if (copied) {
    if (status) status.textContent = t("{what} copied.", { what });
    if (box) box.hidden = true;
  } else {
    // Said, never silent: the status line is a live region, and the text is shown,
    // selected, for a manual copy.
    const why = reason === "NotAllowedError" ? t("the browser did not allow it")
      : t("the clipboard is not available here");
    if (status) {
      status.textContent = t("Could not copy the {what} ({why}): copy it from the box below (Ctrl+C, or ⌘C).",
        { what: what.toLowerCase(), why });
    }
    if (box) {
      box.hidden = false;
      box.value = text;
      box.focus({ preventScroll: true });
      box.select();
    }
  }
  widget.dataset.copied = text;
  widget.dataset.copyResult = copied ? "copied" : "failed";
  if (status && box && box.hidden) {
    copyTimers.set(widget, setTimeout(() => { status.textContent = ""; }, COPY_STATUS_MS));
  }
}

/** The link for a widget's current inputs (and baseline, when one is pinned). */
export async function linkFor(widget, baseline) {
  const calc = widget.dataset.calc;
  const key = encodeURIComponent(linkKey(widget));
  const parts = [];
  const current = await ask("encode", { calc, inputs: readInputs(widget) });
  if (current.ok && current.state) parts.push(`${key}=${current.state}`);
  if (baseline) {
    const base = await ask("encode", { calc, inputs: baseline });
    if (base.ok) parts.push(`${key}.base=${base.state}`);
  }
  const query = parts.length ? `?${parts.join("&")}` : "";
  return `${location.origin}${location.pathname}${query}#${widget.id}`;
}

/** A copy button's action. Not async: the clipboard write must start within the click
 * (copyText), so nothing here waits before calling it. */
export function runAction(widget, action, baseline) {
  const calc = widget.dataset.calc;
  const inputs = readInputs(widget);
  if (action === "copy-link") {
    const url = linkFor(widget, baseline).then((link) => {
      history.replaceState(history.state, "", link);
      return link;
    });
    // Say what the link carries: this widget's inputs only, not the page's other widgets.
    const what = baseline ? t("Link (this calculator's inputs and its pinned baseline)")
      : t("Link (this calculator's inputs only)");
    return copyText(widget, what, url);
  }
  if (["markdown", "csv", "json", "command"].includes(action)) {
    const names = {
      markdown: t("Design-review Markdown"), csv: t("Design-review CSV"), json: "JSON",
      command: t("Command line"),
    };
    // The review carries the link and the baseline comparison (calculators.core.review).
    const text = (action === "command" ? Promise.resolve(null) : linkFor(widget, baseline))
      .then((link) => ask("export", {
        calc, inputs, format: action, link, base: baseline || null,
      }))
      .then((answer) => {
        if (!answer.ok) throw new CopyRefused(answer.error.message);
        return answer.text;
      });
    return copyText(widget, names[action], text);
  }
  return Promise.resolve();
}

/** Render the baseline-vs-current table (or hide it when there is no baseline). */
export async function renderComparison(widget, baseline) {
  const box = widget.querySelector("[data-compare]");
  if (!box) return;
  if (!baseline) {
    box.replaceChildren();
    box.hidden = true;
    showDeltas(widget, null);
    return;
  }
  const answer = await ask("compare", { calc: widget.dataset.calc, base: baseline, inputs: readInputs(widget) });
  if (!answer.ok) return;
  const table = document.createElement("table");
  table.className = "bm-table";
  const shown = captionAbove(table, t("Pinned baseline against the current inputs"));
  const head = table.createTHead().insertRow();
  for (const title of [t("Output"), t("Baseline"), t("Current"), t("Change"), t("Change %")]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = title;
    head.append(th);
  }
  const body = table.createTBody();
  // The headline outputs first, as in the summary, which shows their change too.
  const headline = Array.from(widget.querySelectorAll("[data-headline]"), (el) => el.dataset.headline);
  const rank = (row) => (headline.includes(row.name) ? headline.indexOf(row.name) : headline.length);
  const rows = answer.rows.map((row, index) => ({ row, index }))
    .sort((a, b) => rank(a.row) - rank(b.row) || a.index - b.index).map(({ row }) => row);
  for (const row of rows) {
    const tr = body.insertRow();
    tr.dataset.compare = row.name;
    for (const key of ["label", "base", "current", "delta", "percent"]) tr.insertCell().textContent = row[key];
  }
  box.replaceChildren(...shown, table);
  box.hidden = false;
  showDeltas(widget, answer.rows);
}

function showDeltas(widget, rows) {
  const byName = new Map((rows || []).map((row) => [row.name, row]));
  for (const item of widget.querySelectorAll("[data-headline]")) {
    const slot = item.querySelector("[data-delta]");
    const row = byName.get(item.dataset.headline);
    const change = row ? row.percent || row.delta : "";
    const text = row ? (change && change !== "0" ? `(${change} vs pinned)` : "(as pinned)") : "";
    if (slot && slot.textContent !== text) slot.textContent = text;
  }
}
