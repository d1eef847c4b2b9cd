// Widgets that take an input from a widget above them on the page (a fence's `takes:`,
// bigmodel_guide.fence): the capstone's fabric is sized for the GPUs the cluster sizing
// above it found. The dependent widget does not follow edits there by itself (the reader
// may have sized the fabric on purpose for another count); when the two disagree, a
// button beside its note offers the count above, and one click takes it and recomputes.

import { t } from "./language.js";
function fieldOf(widget, name) {
  return widget.querySelector(`form [name="${CSS.escape(name)}"]`);
}

function sameNumber(a, b) {
  const x = Number(String(a).replaceAll(",", "").trim());
  const y = Number(String(b).replaceAll(",", "").trim());
  return Number.isFinite(x) && Number.isFinite(y) ? x === y : String(a) === String(b);
}

function refresh(item) {
  const target = item.closest(".bm-calc");
  const source = document.getElementById(item.dataset.takesFrom);
  const button = item.querySelector("[data-takes-apply]");
  if (!target || !source || !button) return;
  const cell = source.querySelector(`[data-output="${CSS.escape(item.dataset.takesOutput)}"]`);
  const field = fieldOf(target, item.dataset.takesInput);
  const raw = cell ? cell.dataset.value : "";
  const offer = Boolean(field && raw && !sameNumber(raw, field.value));
  if (offer) {
    // The output's raw text ("4096.0") as a reader would type it ("4096").
    const number = Number(raw);
    const shown = Number.isFinite(number) ? number.toLocaleString("en-US") : cell.textContent.trim();
    const text = t("{label}: use {value}", { label: item.dataset.takesLabel, value: shown });
    if (button.textContent !== text) button.textContent = text;
    button.dataset.value = Number.isFinite(number) ? String(number) : raw;
  }
  if (button.hidden === offer) button.hidden = !offer;
}

/** After ``widget`` shows a result (or an edit), update the offers that involve it. */
export function refreshTaken(widget) {
  for (const item of document.querySelectorAll("[data-takes-from]")) {
    if (item.dataset.takesFrom === widget.id || widget.contains(item)) refresh(item);
  }
}

/** Bind the buttons of the widget's own taken inputs. */
export function bindTaken(widget) {
  for (const item of widget.querySelectorAll("[data-takes-from]")) {
    const button = item.querySelector("[data-takes-apply]");
    const field = fieldOf(widget, item.dataset.takesInput);
    if (!button || !field) continue;
    button.addEventListener("click", () => {
      field.value = button.dataset.value || field.value;
      // The edit goes the way a typed one does: recomputed, echoed, kept in the link.
      field.dispatchEvent(new Event("input", { bubbles: true }));
      button.hidden = true;
      field.focus();
    });
    field.addEventListener("input", () => refresh(item));
  }
}
