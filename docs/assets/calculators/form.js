// The form around the numbers: inputs that apply only in some mode, choices that do not
// go together, one-line help, presets that say what they set, and the address bar
// keeping what the reader typed (so that Back and Forward restore it).
//
// Modes come from the declarations (calculators.core.spec.When), rendered as
// data-when-input / data-when-values on a field or an option: a field whose condition
// fails is hidden (its value kept, still sent); an option whose condition fails is
// disabled with the reason in its text, and if it was chosen, the select moves to its
// default (or the first option that applies) and says so. A choice never leads to an
// error the reader did not make.

import { t } from "./language.js";
import { labelOf, readInputs, setText, writeInputs } from "./dom.js";

function holds(dataset, values) {
  const own = dataset.whenValues.split("|").includes(values[dataset.whenInput] ?? "");
  // A second condition (spec.When.also), both must hold.
  return own && (!dataset.whenAlsoInput
    || dataset.whenAlsoValues.split("|").includes(values[dataset.whenAlsoInput] ?? ""));
}

function optionLabel(option) {
  return option.dataset.label || option.textContent;
}

/** Apply the modes to the form; returns a sentence per choice it had to change. */
export function applyConditions(widget) {
  const values = readInputs(widget);
  const changes = [];
  // Two passes: a choice moved in the first may decide another's options.
  for (let pass = 0; pass < 2; pass += 1) {
    for (const select of widget.querySelectorAll("form select[name]")) {
      for (const option of select.options) {
        if (!option.dataset.whenInput) continue;
        const ok = holds(option.dataset, values);
        if (option.disabled === !ok) continue;
        option.disabled = !ok;
        option.textContent = ok ? option.dataset.label : `${option.dataset.label} (${option.dataset.whyNot})`;
      }
      const chosen = select.selectedOptions[0];
      if (!chosen || !chosen.disabled) continue;
      const options = Array.from(select.options);
      const next = options.find((o) => o.value === select.dataset.default && !o.disabled)
        || options.find((o) => !o.disabled);
      if (!next) continue;
      select.value = next.value;
      values[select.name] = next.value;
      changes.push(t("{label} is now {next}: {chosen} applies {why}.", {
        label: labelOf(widget, select.name), next: optionLabel(next), chosen: optionLabel(chosen),
        why: chosen.dataset.whyNot,
      }));
    }
  }
  for (const field of widget.querySelectorAll("[data-field][data-when-input]")) {
    const hide = !holds(field.dataset, values);
    if (field.hidden !== hide) field.hidden = hide;
  }
  const count = widget.querySelector("[data-more-count]");
  if (count && !widget.querySelector("[data-more='pending']")) {
    const folded = widget.querySelectorAll("details [data-field]:not([hidden])").length;
    setText(count, String(folded));
  }
  return changes;
}

// The folded inputs ("More inputs"): one copy per calculator for the whole site, at the
// defaults (bigmodel_guide.widget_data), added to a widget when the reader opens the
// fold or first reaches for the widget, and before anything writes to the form or
// applies its modes. Until then readInputs answers the example's values for them.
const FOLDED_ID = "__widget__"; // stands for the widget's id in the copy
const folding = new WeakMap(); // widget -> promise of the added inputs
let foldedFile = null;

// The page's language picks the data file: presets.json, presets.zh.json (one copy of
// each per language for the whole site, beside this script).
function fetchJson(name) {
  const lang = document.documentElement.lang.startsWith("zh") ? ".zh" : "";
  return fetch(new URL(`./${name.replace(".json", `${lang}.json`)}`, import.meta.url)).then((response) => {
    if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
    return response.json();
  });
}

/** Add the widget's folded inputs if they are not there yet (resolves when they are). */
export function addFoldedInputs(widget) {
  const fold = widget.querySelector("details[data-more='pending']");
  if (!fold) return Promise.resolve();
  if (!folding.has(widget)) {
    if (!foldedFile) {
      foldedFile = fetchJson("more-inputs.json");
      foldedFile.catch(() => { foldedFile = null; }); // try again next time
    }
    folding.set(widget, foldedFile.then((file) => {
      const copy = document.createElement("template");
      copy.innerHTML = (file[widget.dataset.calc] || "").replaceAll(FOLDED_ID, widget.id);
      const form = widget.querySelector("form");
      const place = fold.querySelector(".bm-calc__fields");
      for (const field of copy.content.querySelectorAll("[data-field]")) {
        // An input the example set is shown first, not folded.
        if (!form.querySelector(`[name="${CSS.escape(field.dataset.field)}"]`)) place.append(field);
      }
      fold.dataset.more = "ready";
      const note = fold.querySelector("[data-more-note]");
      if (note) note.remove();
      if (hasConditions(widget)) applyConditions(widget);
    }).catch((err) => {
      folding.delete(widget);
      throw err;
    }));
  }
  return folding.get(widget);
}

/** Whether a widget's form has any mode to apply (most have none). */
export function hasConditions(widget) {
  return widget.querySelector("form [data-when-input]") !== null;
}

/** Help is one line; a click shows all of it (focus in the field does too, in CSS). */
export function bindHelp(widget) {
  widget.addEventListener("click", (event) => {
    const help = event.target instanceof Element ? event.target.closest("[data-help]") : null;
    if (!help || !widget.contains(help)) return;
    if (help.hasAttribute("data-open")) help.removeAttribute("data-open");
    else help.setAttribute("data-open", "");
  });
}

// Presets: the picker keeps showing what was applied; a line under it says its source,
// which inputs it set, that the others kept their values, and "modified" once an
// input it set no longer holds its value.
const applied = new WeakMap(); // widget -> [{kind, label, source, sets, texts}]

function describePresets(widget) {
  const line = widget.querySelector("[data-preset-applied]");
  if (!line) return;
  const list = applied.get(widget) || [];
  const inputs = readInputs(widget);
  const text = list.map((p) => {
    const modified = Object.keys(p.texts).some((name) => inputs[name] !== p.texts[name]);
    const sets = Object.keys(p.texts).map((name) => labelOf(widget, name)).join(", ");
    return `${p.label}${modified ? " (modified)" : ""}. Source: ${p.source}. It set ${sets}; ` +
      "other inputs kept their values.";
  }).join(" ");
  setText(line, text);
}

// What each preset sets, and its source: one file for the whole site (written at build
// time by bigmodel_guide.widget_data), fetched once, when a reader first reaches for a
// picker. The pages carry only the presets' names.
let presetFile = null;

function loadPresets() {
  if (!presetFile) {
    presetFile = fetchJson("presets.json");
    presetFile.catch(() => { presetFile = null; }); // try again on the next choice
  }
  return presetFile;
}

export function bindPresets(widget, onApplied) {
  const select = widget.querySelector("select[data-preset]");
  if (!select) return;
  const box = widget.querySelector("[data-preset-box]");
  if (box) box.hidden = false;
  for (const type of ["focus", "pointerdown"]) {
    select.addEventListener(type, () => loadPresets().catch(() => {}), { once: true });
  }
  select.addEventListener("change", async () => {
    const id = select.value;
    if (!id) {
      applied.set(widget, []);
      describePresets(widget);
      return;
    }
    let found;
    try {
      const [file] = await Promise.all([loadPresets(), addFoldedInputs(widget)]);
      found = file[widget.dataset.calc]?.[id];
    } catch {
      found = undefined;
    }
    if (select.value !== id) return; // another choice came in while the file loaded
    if (!found) {
      setText(widget.querySelector("[data-preset-applied]"),
        t("This configuration could not be loaded; the inputs were not changed."));
      return;
    }
    const preset = { kind: found.kind, label: found.label, source: found.source, texts: found.texts };
    writeInputs(widget, preset.texts);
    // One preset per kind (a model and a cluster compose); a new one of a kind replaces.
    applied.set(widget, [...(applied.get(widget) || []).filter((p) => p.kind !== preset.kind), preset]);
    describePresets(widget);
    onApplied();
  });
}

/**
 * A pasted config.json: the worker reads it (calculators.inputs.hf_config) and answers
 * the field texts it gives this calculator, or an error naming the field it cannot read.
 * Applied as a preset of the model's kind is; the line under the box says which fields
 * were read and which defaults were taken.
 */
export function bindConfig(widget, ask, onApplied) {
  const box = widget.querySelector("[data-config-box]");
  if (!box) return;
  box.hidden = false;
  const area = box.querySelector("textarea[data-config]");
  const line = box.querySelector("[data-config-applied]");
  box.querySelector("[data-config-apply]").addEventListener("click", async () => {
    const text = area.value;
    setText(line, t("Reading the configuration…"));
    let answer;
    try {
      [answer] = await Promise.all([ask("config", { calc: widget.dataset.calc, config: text }),
        addFoldedInputs(widget)]);
    } catch {
      answer = null;
    }
    if (area.value !== text) return; // edited while it was read: the next click reads it
    if (!answer || !answer.ok) {
      const why = answer ? answer.error.message : t("the live runtime is unavailable");
      setText(line, t("Not applied: {why}. The inputs were not changed.", { why }));
      return;
    }
    writeInputs(widget, answer.texts);
    const preset = { kind: answer.kind, label: answer.name, source: "config.json", texts: answer.texts };
    applied.set(widget, [...(applied.get(widget) || []).filter((p) => p.kind !== preset.kind), preset]);
    describePresets(widget);
    const read = t("{name}: read {used}.", { name: answer.name, used: answer.used.join(", ") });
    const defaults = t("Not in the file, so the family's defaults: {defaults}.",
      { defaults: answer.defaults.join(", ") });
    setText(line, answer.defaults.length ? `${read} ${defaults}` : read);
    onApplied();
  });
}

/** After an edit: say whether the applied presets still hold. */
export function presetsEdited(widget) {
  if (applied.has(widget)) describePresets(widget);
}

// The address bar: each edited widget's inputs, as a share link carries them, kept in
// the current history entry with history.replaceState (Material keeps the URL when it
// stores its own scroll state there). Back and Forward then restore them as a link
// would. Encoded here, not by the worker: an input's text goes in when it differs from
// the example's (a link's inputs are read over the example), quoted as
// share.encode_state quotes them.
function quote(text) {
  return encodeURIComponent(text.trim())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%2F/gi, "/");
}

export function encodeWidget(widget, inputs, example) {
  const pairs = [];
  for (const control of widget.querySelectorAll("form [name]")) {
    const text = inputs[control.name] ?? "";
    if (text === (example[control.name] ?? "")) continue;
    pairs.push(`${control.name}:${quote(text)}`);
  }
  return pairs.join(",");
}

/** Put ``entries`` ([key, state] pairs) in the address, keeping the theme's keys. */
export function rememberInAddress(entries, themeKeys) {
  const kept = location.search.slice(1).split("&").filter((part) => {
    const key = part.split("=", 1)[0];
    return part && themeKeys.has(key);
  });
  const parts = [...kept, ...entries.filter(([, state]) => state)
    .map(([key, state]) => `${encodeURIComponent(key)}=${state}`)];
  const query = parts.length ? `?${parts.join("&")}` : "";
  const url = `${location.pathname}${query}${location.hash}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) {
    history.replaceState(history.state, "", url);
  }
}
