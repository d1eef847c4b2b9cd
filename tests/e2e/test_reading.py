"""Using a calculator while reading it, in headless Chromium at 1280x900 and 390x844:
an edit anywhere in a form shows its effect on screen (a headline output stays in view
and shows the new value), charts are readable (text of at least 10 CSS px, no two
labels overlapping), and no choice in any select leads to an error state. One browser
context per width; the pages are visited in turn, each widget edited in place."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

import calculators
from calculators.core import i18n
from calculators.core.localise import localised
from tests.site.htmlscan import PageScan

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page

    from calculators.core.spec import Param

pytestmark = pytest.mark.e2e
LIVE_MS = 60_000
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}
MIN_CHART_TEXT_PX = 10.0


def widget_pages(site: Path) -> list[str]:
    """Every page of the built site that holds a calculator, as a path."""
    found = []
    for html in sorted(site.rglob("index.html")):
        if "data-calc=" in html.read_text(encoding="utf-8"):
            found.append("/" + str(html.parent.relative_to(site)).replace(".", "").strip("/"))
    return [p if p.endswith("/") else p + "/" for p in found]


@pytest.fixture(scope="module", params=list(VIEWPORTS))
def sized_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    width, height = VIEWPORTS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height},
                                  bypass_csp=True, has_touch=width < 600)
    page = context.new_page()
    yield page
    context.close()


LAST_VISIBLE = """(sel) => {
  const controls = [...document.querySelectorAll(sel + ' form [name]')]
    .filter((c) => c.checkVisibility());
  const last = controls[controls.length - 1];
  last.scrollIntoView({ block: 'center' });
  return { name: last.name, tag: last.tagName, value: last.value,
    options: last.tagName === 'SELECT'
      ? [...last.options].filter((o) => !o.disabled && !o.selected).map((o) => o.value) : [] };
}"""

HEADLINES_IN_VIEW = """(sel) => {
  // Headline outputs whose box is inside the viewport and not covered by anything
  // (the theme's header, another widget's summary): what a reader sees right now.
  const seen = {};
  for (const item of document.querySelectorAll(sel + ' [data-headline]:not([hidden])')) {
    const box = item.getBoundingClientRect();
    if (box.top < 0 || box.bottom > innerHeight || box.left < 0 || box.right > innerWidth) continue;
    const hit = document.elementFromPoint((box.left + box.right) / 2, (box.top + box.bottom) / 2);
    if (!hit || !item.contains(hit)) continue;
    seen[item.dataset.headline] = item.querySelector('[data-headline-value]').textContent;
  }
  return seen;
}"""

WIDGETS = "ws => ws.map(w => [w.id, w.dataset.calc])"
OPEN_FOLDS = """async () => {
  // Opening a fold adds its inputs (form.js fetches them once): wait until all are in.
  document.querySelectorAll('details.bm-calc__more').forEach((d) => { d.open = true; });
  for (let i = 0; i < 500 && document.querySelector("[data-more='pending']"); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return document.querySelectorAll("[data-more='pending']").length;
}"""
READ_INPUTS = """(sel) => Object.fromEntries([...document.querySelectorAll(sel + ' form [name]')]
  .map((c) => [c.name, c.value]))"""


def candidates(param: Param, text: str) -> list[str]:
    """New texts for a field, most natural first: double, half, plus one, the bounds."""
    if param.kind == "text":
        return [text + "\n"]
    try:
        value = param.parse(text)
    except calculators.ValidationError:
        value = None
    base = value if isinstance(value, (int, float)) and not isinstance(value, bool) else (
        param.minimum or 1.0)
    found = []
    for number in (base * 2, base / 2, base + 1, base - 1, param.maximum, param.minimum):
        if number is None or not math.isfinite(number):
            continue
        try:
            checked = param.check(float(number))
        except calculators.ValidationError:
            continue
        shown = param.as_text(checked)
        if shown != text and shown not in found:
            found.append(shown)
    return found


def _settled(page: Page, sel: str) -> str:
    page.wait_for_function(
        "s => ['ready', 'error'].includes(document.querySelector(s).dataset.state)",
        arg=sel, timeout=LIVE_MS)
    return str(page.get_attribute(sel, "data-state"))


def edit_last_visible_input(page: Page, sel: str, calc_id: str) -> str:
    """Change the widget's last visible input to a value it accepts; return its name."""
    last = page.evaluate(LAST_VISIBLE, sel)
    control = page.locator(f'{sel} form [name="{last["name"]}"]')
    if last["tag"] == "SELECT":
        tries = last["options"]
    else:
        tries = candidates(calculators.REGISTRY[calc_id].param(last["name"]), last["value"])
    assert tries, f"{sel}: no other value to try for {last['name']}"
    for value in tries:
        if last["tag"] == "SELECT":
            control.select_option(value)
        else:
            control.fill(value)
        if _settled(page, sel) == "ready":
            return str(last["name"])
    pytest.fail(f"{sel}: no value of {last['name']} computed: tried {tries}")


def test_an_edit_anywhere_shows_its_effect_in_view(
        sized_page: Page, site_url: str, built_site: Path) -> None:
    page = sized_page
    for path in widget_pages(built_site):
        page.goto(f"{site_url}{path}")
        widgets = page.eval_on_selector_all("[data-calc]", WIDGETS)
        for widget_id, calc_id in widgets:
            sel = f"#{widget_id}"
            name = edit_last_visible_input(page, sel, calc_id)
            shown = page.evaluate(HEADLINES_IN_VIEW, sel)
            where = f"{path}{sel} after editing {name}"
            assert shown, f"{where}: no headline output in view"
            lang = "zh" if path.startswith("/zh/") else "en"
            with i18n.language(lang):  # the page shows its results in its own language
                calc = localised(calculators.REGISTRY[calc_id], lang)
                result = calc.compute(page.evaluate(READ_INPUTS, sel))
                texts = {out: result.text(out) for out in shown}
            assert any(text == texts[out] for out, text in shown.items()), (
                f"{where}: {shown} is not the new result {texts}")
        check_charts(page, path)
        check_tables(page, path)


TABLES = """() => ({
  page: document.scrollingElement.scrollWidth - innerWidth,
  tables: [...document.querySelectorAll('[data-calc] [data-table]')]
    .filter((t) => t.querySelector('table'))
    .map((t) => [t.closest('[data-calc]').id, t.scrollWidth - t.clientWidth]),
  prose: [...document.querySelectorAll('article > .md-typeset__scrollwrap')]
    .map((t) => [t.querySelector('th')?.textContent.trim() ?? '', t.scrollWidth - t.clientWidth]),
})"""


def check_tables(page: Page, path: str) -> None:
    """Result tables, and the chapters' own tables, wrap to fit their column where there
    is room (1280 wide); on a phone they may scroll in their own box, never the page.
    (The reference's tables of a calculator's inputs, six columns of data, may scroll.)"""
    found = page.evaluate(TABLES)
    assert found["page"] <= 1, f"{path}: the page scrolls sideways"
    if page.viewport_size and page.viewport_size["width"] >= 1000:
        wide = [(widget, extra) for widget, extra in found["tables"] if extra > 1]
        assert wide == [], f"{path}: tables wider than their column: {wide}"
        if not path.removeprefix("/zh").startswith("/reference/"):
            wide = [(head, extra) for head, extra in found["prose"] if extra > 1]
            assert wide == [], f"{path}: tables wider than their column: {wide}"


CHART_TEXT = """() => {
  // Every text of every chart on screen: its rendered font size (CSS px) and box.
  const found = [];
  for (const svg of document.querySelectorAll('[data-calc] svg.bm-chart')) {
    if (!svg.checkVisibility()) continue;
    const widget = svg.closest('[data-calc]').id;
    const texts = [...svg.querySelectorAll('text')].map((t) => {
      const m = t.getScreenCTM();
      const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      const r = t.getBoundingClientRect();
      return { text: t.textContent, size, box: [r.left, r.top, r.right, r.bottom] };
    });
    found.push({ widget, texts });
  }
  return found;
}"""


def check_charts(page: Page, path: str) -> None:
    """Chart text renders at 10 CSS px or more, and no two text boxes overlap."""
    for chart in page.evaluate(CHART_TEXT):
        texts = chart["texts"]
        where = f"{path}#{chart['widget']}"
        small = [(t["text"], round(t["size"], 1)) for t in texts if t["size"] < MIN_CHART_TEXT_PX]
        assert small == [], f"{where}: chart text below {MIN_CHART_TEXT_PX} px: {small[:5]}"
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                (l1, t1, r1, b1), (l2, t2, r2, b2) = a["box"], b["box"]
                overlap = max(0.0, min(r1, r2) - max(l1, l2)) * max(0.0, min(b1, b2) - max(t1, t2))
                assert overlap < 1.0, f"{where}: {a['text']!r} overlaps {b['text']!r}"


SELECTS = """(sel) => [...document.querySelectorAll(sel + ' form select[name]')]
  .filter((s) => s.checkVisibility())
  .map((s) => ({ name: s.name, value: s.value,
    options: [...s.options].filter((o) => !o.disabled && o.value !== s.value)
      .map((o) => o.value) }))"""

PICK = """([sel, name, value]) => {
  // Choose an option as a reader would (a change event), unless the select is hidden or
  // the option disabled by an earlier choice: then say so.
  const select = document.querySelector(`${sel} form select[name="${name}"]`);
  const option = [...select.options].find((o) => o.value === value);
  if (!select.checkVisibility() || !option || option.disabled) return false;
  select.value = value;
  select.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
}"""

RESTORE = """([sel, inputs, name]) => {
  // The widget's own inputs back, then one change event (conditions, one recompute).
  for (const c of document.querySelectorAll(sel + ' form [name]')) c.value = inputs[c.name];
  document.querySelector(`${sel} form select[name="${name}"]`)
    .dispatchEvent(new Event('change', { bubbles: true }));
}"""

SETTLED = "s => ['ready', 'error'].includes(document.querySelector(s).dataset.state)"
#: Poll on a timer: a page that is not in front gets (almost) no animation frames.
POLL_MS = 20

REPORT = """([sel, name, value]) => {
  const w = document.querySelector(sel);
  const select = w.querySelector(`form select[name="${name}"]`);
  const option = [...select.options].find((o) => o.value === value);
  return { state: w.dataset.state, status: w.querySelector('[data-status]').textContent,
    value: select.value, disabled: option.disabled, text: option.textContent,
    inputs: Object.fromEntries([...w.querySelectorAll('form [name]')]
      .map((c) => [c.name, c.value])) };
}"""


@dataclass
class Job:
    path: str
    widget_id: str
    cost: float


#: A calculator whose computation takes longer than this natively (the planners and the
#: sizing, which search thousands of layouts) is swept in one widget: every option of
#: every select, each a search, in each of its chapter examples would take the tier
#: past its time; the unit tier's extremes and fuzz tests try the combinations natively.
HEAVY_COMPUTE_S = 0.05


def sweep_jobs(site: Path) -> list[Job]:
    """One job per widget with a select, skipping one whose calculator and example were
    already taken (the reference page's defaults, swept in a chapter), and a heavy
    calculator's widgets after its first."""
    seen: set[str] = set()
    jobs: list[Job] = []
    per_compute: dict[str, float] = {}
    for path in widget_pages(site):
        scan = PageScan()
        scan.feed((site / path.strip("/") / "index.html").read_text(encoding="utf-8"))
        for widget in scan.widgets:
            key = repr((widget.calc_id, sorted(widget.example.items())))
            calc = calculators.REGISTRY[widget.calc_id]
            options = sum(len(p.choices) if p.kind == "choice" else 2 * (p.kind == "bool")
                          for p in calc.params)
            heavy = per_compute.get(widget.calc_id, 0.0) > HEAVY_COMPUTE_S
            if key in seen or not options or heavy:
                continue
            seen.add(key)
            if widget.calc_id not in per_compute:
                started = time.perf_counter()
                calc.compute({})
                per_compute[widget.calc_id] = time.perf_counter() - started
            jobs.append(Job(path, widget.widget_id, options * (0.03 + per_compute[widget.calc_id])))
    return jobs


def sweep(page: Page, site_url: str, jobs: list[Job], refused: list[str]) -> Iterator[None]:
    """Sweep the jobs' widgets on one page, yielding while a compute runs so that
    another page's worker can compute at the same time."""
    shown = ""
    for job in jobs:
        if job.path != shown:
            page.goto(f"{site_url}{job.path}")
            assert page.evaluate(OPEN_FOLDS) == 0, f"{job.path}: folded inputs not added"
            shown = job.path
        sel = f"#{job.widget_id}"
        own = page.evaluate(READ_INPUTS, sel)
        for select in page.evaluate(SELECTS, sel):
            name = select["name"]
            for option in select["options"]:
                if not page.evaluate(PICK, [sel, name, option]):
                    yield from restore(page, sel, own, name)  # an earlier choice moved it
                    assert page.evaluate(PICK, [sel, name, option]), f"{sel} {name}={option}"
                yield
                page.wait_for_function(SETTLED, arg=sel, timeout=LIVE_MS, polling=POLL_MS)
                now = page.evaluate(REPORT, [sel, name, option])
                where = f"{job.path}{sel} {name}={option}"
                assert now["state"] == "ready", f"{where}: {now['status']}"
                if now["value"] != option:  # refused: disabled, with the reason
                    assert now["disabled"] and "not with these inputs" in now["text"], where
                    refused.append(where)
                if any(now["inputs"][k] != own[k] for k in own if k != name):
                    yield from restore(page, sel, own, name)
            if page.evaluate(READ_INPUTS, sel) != own:
                yield from restore(page, sel, own, name)


def restore(page: Page, sel: str, own: dict[str, str], name: str) -> Iterator[None]:
    page.evaluate(RESTORE, [sel, own, name])
    yield
    page.wait_for_function(SETTLED, arg=sel, timeout=LIVE_MS, polling=POLL_MS)
    assert page.get_attribute(sel, "data-state") == "ready", f"{sel}: its own state again"


def test_no_choice_leads_to_an_error_state(browser: Browser, site_url: str,
                                           built_site: Path) -> None:
    """Every enabled option of every select of every widget, each from the widget's own
    state: the widget never ends in an error. A choice that does not go with the other
    inputs is refused: the select keeps a choice that works and the option is disabled
    with the calculator's reason.

    A select's options are tried one after another (each replaces the last, so each
    starts from the widget's own inputs); the widget's own state is written back before
    the next select, and whenever a choice moved another field (a declared condition).
    Two pages share the widgets (balanced by a native estimate of their cost), so that
    two workers compute at once."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    lanes: list[list[Job]] = [[], []]
    for job in sorted(sweep_jobs(built_site), key=lambda j: -j.cost):
        min(lanes, key=lambda lane: sum(j.cost for j in lane)).append(job)
    refused: list[str] = []
    running = [sweep(context.new_page(), site_url, sorted(lane, key=lambda j: j.path), refused)
               for lane in lanes]
    while running:
        for lane in list(running):
            try:
                next(lane)
            except StopIteration:
                running.remove(lane)
    print(f"{len(refused)} choices refused with their reason: {refused[:8]}")
    context.close()
