"""Reading aids in the chapters (issue 37): a takeaway box where a section states a rule,
and worked problems whose answers sit behind a click.

The format, which the chapters share and this test holds:

* a takeaway is an open admonition ``!!! abstract "Takeaway"`` (or ``"Takeaway: ..."``)
  right after the section that states the rule;
* a worked problem is ``!!! question "Problem: <short title>"`` with the problem, then,
  indented inside it, a collapsed ``??? success "Answer"`` with the worked answer and a
  link to the live widget that checks it (a share link with the problem's inputs, or the
  widget's anchor and which inputs to set).

Every figure an answer states is checked against the calculators in
tests/unit/test_worked_problems_*.py, as the capstone's prose is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: The teaching chapters; the capstone is one long worked example, the glossary and the
#: home page are not chapters.
CHAPTERS = ("compute.md", "dense.md", "moe.md", "post-training.md", "communication.md",
            "network.md", "sparse.md", "long-runs.md")
MIN_PROBLEMS = 2
TAKEAWAY = re.compile(r'^!!! abstract "Takeaway(: [^"]+)?"\s*$', re.MULTILINE)
PROBLEM = re.compile(r'^!!! question "Problem: [^"]+"\s*$', re.MULTILINE)
ANSWER = re.compile(r'^    \?\?\? success "Answer"\s*$', re.MULTILINE)


def _problems(text: str) -> list[str]:
    """Each problem's block: its opening line and the indented lines under it."""
    blocks = []
    for match in PROBLEM.finditer(text):
        lines = []
        for line in text[match.end():].splitlines()[1:]:
            if line and not line.startswith("    "):
                break
            lines.append(line)
        blocks.append("\n".join(lines))
    return blocks


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_has_takeaways_and_worked_problems(chapter: str) -> None:
    text = (DOCS / chapter).read_text("utf-8")
    assert TAKEAWAY.search(text), f"{chapter}: no takeaway box"
    problems = _problems(text)
    assert len(problems) >= MIN_PROBLEMS, f"{chapter}: {len(problems)} worked problems"
    for block in problems:
        # The answer is collapsed inside the problem, and says where to check it live.
        assert len(ANSWER.findall(block)) == 1, block[:200]
        answer = block[ANSWER.search(block).end():]  # type: ignore[union-attr]
        assert re.search(r"\]\((\w[\w-]*\.md)?(\?[^)#]+)?#[\w-]+\)", answer), (
            f"{chapter}: an answer without a link to the widget that checks it: "
            + block[:200])
