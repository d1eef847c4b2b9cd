// Writing results into a widget. Text goes in with textContent only; tables are built
// element by element; charts (SVG from our own Python, labels escaped there) are parsed
// as XML, never as HTML, and stripped of anything executable.

const SVG_NS = "http://www.w3.org/2000/svg";

export function setStatus(widget, text) {
  const status = widget.querySelector("[data-status]");
  if (status) status.textContent = text;
}

export function setState(widget, state) {
  widget.dataset.state = state;
}

export function readInputs(widget) {
  const inputs = {};
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
    slot.textContent = "";
    slot.hidden = true;
  }
  for (const control of widget.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
}

export function showError(widget, error) {
  clearErrors(widget);
  const name = String(error.input || "");
  const slot = Array.from(widget.querySelectorAll("[data-error-for]")).find(
    (el) => el.dataset.errorFor === name,
  );
  const message = String(error.message || "invalid value");
  if (slot) {
    slot.textContent = message;
    slot.hidden = false;
    const folded = slot.closest("details");
    if (folded) folded.open = true;
    const control = widget.querySelector(`form [name="${CSS.escape(name)}"]`);
    if (control) control.setAttribute("aria-invalid", "true");
    setStatus(widget, `Check ${name}: the results shown are from the last valid inputs.`);
  } else {
    setStatus(widget, `${message} The results shown are from the last valid inputs.`);
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
  list.replaceChildren(
    ...lines.map((line) => {
      const li = document.createElement("li");
      li.textContent = String(line);
      return li;
    }),
  );
}

export function buildTable(holder, table) {
  if (!holder) return;
  if (!table) {
    holder.replaceChildren();
    return;
  }
  const el = document.createElement("table");
  el.className = "bm-table";
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

export function applyResult(widget, result) {
  for (const cell of widget.querySelectorAll("[data-output]")) {
    const output = result.outputs[cell.dataset.output];
    if (!output) continue;
    cell.textContent = output.text;
    cell.dataset.value = output.raw;
    // An output that does not apply to these inputs (n/a) is not shown at all.
    const row = cell.closest("tr");
    if (row) row.hidden = output.raw === "";
    cell.title = `${output.raw} ${output.unit}`.trim();
  }
  for (const hint of widget.querySelectorAll("[data-parsed-for]")) {
    hint.textContent = (result.parsed || {})[hint.dataset.parsedFor] || "";
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
