"""The ```calculator fence through a bare Markdown instance (no whole-site build)."""

from __future__ import annotations

from pathlib import Path

import markdown
import pytest
from mkdocs.theme import Theme
from pymdownx.superfences import SuperFencesException

import calculators
from bigmodel_guide.fence import FenceError, check_page, find_fences, parse_fence
from bigmodel_guide.plugin import CalculatorsPlugin
from bigmodel_guide.widget_data import WIDGET_ID, more_inputs_document
from tests.site.htmlscan import PageScan

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def md() -> markdown.Markdown:
    plugin = CalculatorsPlugin()
    plugin._env = Theme(name="material", custom_dir=str(ROOT / "templates")).get_env()
    fence = {"name": "calculator", "class": "calculator", "format": plugin._format_fence}
    return markdown.Markdown(
        extensions=["pymdownx.superfences"],
        extension_configs={"pymdownx.superfences": {"custom_fences": [fence]}},
    )


def test_fence_renders_widget_with_contract_hooks(md: markdown.Markdown) -> None:
    html = md.convert("```calculator\nid: training_compute\nparams: 70B\n```\n")
    scan = PageScan()
    scan.feed(html)
    [widget] = scan.widgets
    assert widget.calc_id == "training_compute"
    assert widget.widget_id == "calc-training-compute"
    assert widget.example["params"] == "70B"
    expected = calculators.compute("training_compute", params="70B")
    assert widget.outputs["total_flops"] == expected.raw("total_flops")
    assert 'data-state="static"' in html
    # Each input is a field in the widget or, folded, in the site's one copy of the
    # calculator's folded inputs (the widget marks its fold as waiting for them).
    calc = calculators.REGISTRY["training_compute"]
    env = Theme(name="material", custom_dir=str(ROOT / "templates")).get_env()
    folded = more_inputs_document(env, {calc.id: calc})[calc.id]
    assert 'data-more="pending"' in html
    for param in calc.params:
        in_widget, in_fold = f'name="{param.name}"' in html, f'name="{param.name}"' in folded
        assert in_widget != in_fold, param.name
        assert in_fold == calc.is_advanced(param.name), param.name
    assert f'id="{WIDGET_ID}-{calc.params[-1].name}"' in folded or WIDGET_ID in folded


def test_an_input_the_example_sets_is_never_folded(md: markdown.Markdown) -> None:
    """A folded input from the shared copy holds its default: an example that sets one
    shows it among the first inputs instead."""
    calc = calculators.REGISTRY["training_compute"]
    folded = next(p for p in calc.params if calc.is_advanced(p.name) and p.kind == "float"
                  and isinstance(p.default, float))
    text = folded.as_text(folded.default)  # even at its default: the example names it
    html = md.convert(f"```calculator\nid: training_compute\n{folded.name}: '{text}'\n```\n")
    first, fold = html.split('data-more="pending"')
    assert f'name="{folded.name}"' in first
    assert f'name="{folded.name}"' not in fold


def test_duplicate_widgets_get_distinct_ids(md: markdown.Markdown) -> None:
    html = md.convert(
        "```calculator\nid: training_compute\n```\n\n```calculator\nid: training_compute\n```\n"
    )
    scan = PageScan()
    scan.feed(html)
    assert [w.widget_id for w in scan.widgets] == [
        "calc-training-compute",
        "calc-training-compute-2",
    ]


def test_hostile_text_is_escaped(md: markdown.Markdown) -> None:
    html = md.convert('```calculator\nid: training_compute\nanchor: safe\nparams: "1B"\n```\n')
    assert "<script" not in html.split("bm-calc")[1]
    with pytest.raises(SuperFencesException):
        md.convert(
            '```calculator\nid: training_compute\nparams: "<script>alert(1)</script>"\n```\n'
        )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id: nope", "unknown calculator"),
        ("params: 1", "`id:`"),
        ("id: [", "not valid YAML"),
        ("id: training_compute\nparam: 1", "param"),
        ("id: training_compute\nparams: -1", "params"),
        ("id: training_compute\nanchor: 'a b'", "anchor"),
        ("id: fabric_sizing\nnum_gpus: 64\ntakes: 1", "must map"),
        ("id: fabric_sizing\nnum_gpus: 64\ntakes:\n  gpus: a.num_gpus", "not an input"),
        ("id: fabric_sizing\nnum_gpus: 64\ntakes:\n  num_gpus: nodot", "anchor.output"),
        ("id: fabric_sizing\ntakes:\n  num_gpus: a.num_gpus", "example value"),
    ],
)
def test_bad_fences_are_refused(body: str, message: str) -> None:
    with pytest.raises(FenceError, match=message):
        parse_fence(body)


def test_errors_name_the_page_and_line() -> None:
    page = "# Title\n\ntext\n\n```calculator\nid: training_compute\ntokens: zero\n```\n"
    with pytest.raises(FenceError, match=r"^compute\.md:5: .*tokens"):
        check_page(page, "compute.md")


def test_find_fences_skips_other_code_and_handles_long_fences() -> None:
    page = "```python\nid: x\n```\n\n````calculator\nid: training_compute\n````\n"
    [found] = find_fences(page)
    assert found.line == 5
    assert found.source == "id: training_compute"


_SIZING = "```calculator\nid: cluster_sizing\nanchor: above\n```\n\n"


def test_a_taken_input_must_be_the_output_of_the_widget_above(md: markdown.Markdown) -> None:
    gpus = calculators.compute("cluster_sizing").value("num_gpus")
    assert isinstance(gpus, float)
    taking = ("```calculator\nid: fabric_sizing\nnum_gpus: {n}\ntakes:\n"
              "  num_gpus: {source}\n```\n")
    html = md.convert(_SIZING + taking.format(n=int(gpus), source="above.num_gpus"))
    assert 'data-takes-from="above"' in html
    assert 'data-takes-output="num_gpus"' in html
    assert 'data-takes-input="num_gpus"' in html
    for page, error in (
            (_SIZING + taking.format(n=int(gpus) + 8, source="above.num_gpus"),
             "gives num_gpus"),
            (taking.format(n=int(gpus), source="elsewhere.num_gpus"), "not a widget above"),
            (_SIZING + taking.format(n=int(gpus), source="above.gpus"), "not an output")):
        md.reset()
        with pytest.raises(SuperFencesException, match=error):
            md.convert(page)
