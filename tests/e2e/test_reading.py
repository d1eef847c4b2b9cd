"""Using a calculator while reading it, in headless Chromium at 1280x900 and 390x844:
an edit anywhere in a form shows its effect on screen (a headline output stays in view
and shows the new value), charts are readable (text of at least 10 CSS px, no two
labels overlapping), and no choice in any select leads to an error state. One browser
context per width; the pages are visited in turn, each widget edited in place."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

import calculators

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Locator, Page

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
OPEN_FOLDS = "document.querySelectorAll('details.bm-calc__more').forEach(d => d.open = true)"
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
            result = calculators.compute(calc_id, **page.evaluate(READ_INPUTS, sel))
            assert any(text == result.text(out) for out, text in shown.items()), (
                f"{where}: {shown} is not the new result")
        check_charts(page, path)


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


RESTORE = """([sel, inputs]) => {
  for (const c of document.querySelectorAll(sel + ' form [name]')) c.value = inputs[c.name];
}"""


def test_no_choice_leads_to_an_error_state(browser: Browser, site_url: str,
                                           built_site: Path) -> None:
    """Every enabled option of every select of every widget, each from the widget's own
    state: the widget never ends in an error. A choice that does not go with the other
    inputs is refused: the select keeps a choice that works and the option is disabled
    with the calculator's reason. A select's options are tried one after another (each
    replaces the last, so each starts from the widget's own inputs); the widget's own
    state is written back before the next select, and whenever a choice moved another
    field (a declared condition). Widgets with the same calculator and inputs (a
    chapter's default example and the reference page's) are swept once."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    refused: list[str] = []
    swept: set[str] = set()
    for path in widget_pages(built_site):
        page.goto(f"{site_url}{path}")
        page.evaluate(OPEN_FOLDS)
        for widget_id, calc_id in page.eval_on_selector_all("[data-calc]", WIDGETS):
            sel = f"#{widget_id}"
            own = page.evaluate(READ_INPUTS, sel)
            key = repr((calc_id, sorted(own.items())))
            if key in swept:
                continue
            swept.add(key)
            for select in page.evaluate(SELECTS, sel):
                name = select["name"]
                control = page.locator(f'{sel} form select[name="{name}"]')
                for option in select["options"]:
                    if not control.is_visible() or control.locator(
                            f'option[value="{option}"]').get_attribute("disabled") is not None:
                        restore(page, sel, own, control)  # an earlier choice hid or moved it
                    control.select_option(option)
                    state = _settled(page, sel)
                    status = page.text_content(f"{sel} [data-status]") or ""
                    assert state == "ready", f"{path}{sel} {name}={option}: {status}"
                    if control.input_value() != option:  # refused: disabled, with a reason
                        disabled = control.locator(f'option[value="{option}"]')
                        assert disabled.get_attribute("disabled") is not None
                        assert "not with these inputs" in (disabled.text_content() or "")
                        refused.append(f"{path}{sel} {name}={option}")
                    now = page.evaluate(READ_INPUTS, sel)
                    if any(now[k] != own[k] for k in own if k != name):
                        restore(page, sel, own, control)
                if control.input_value() != select["value"]:
                    restore(page, sel, own, control)
    print(f"{len(refused)} choices refused with their reason: {refused[:8]}")
    context.close()


def restore(page: Page, sel: str, own: dict[str, str], control: Locator) -> None:
    """Write the widget's own inputs back and recompute once (a change event on a
    select applies the declared conditions again)."""
    page.evaluate(RESTORE, [sel, own])
    control.dispatch_event("change")
    assert _settled(page, sel) == "ready", f"{sel}: its own state again"
