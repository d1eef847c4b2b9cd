"""A small HTML scanner for the site tier: ids, links, and calculator widgets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Widget:
    calc_id: str
    widget_id: str
    example: dict[str, str]
    outputs: dict[str, str] = field(default_factory=dict)


class PageScan(HTMLParser):
    """Collects element ids, hrefs/srcs, and each widget's example and data-values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.repeated_ids: list[str] = []
        self.links: list[str] = []
        self.sources: list[str] = []
        self.widgets: list[Widget] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if "id" in values:
            if values["id"] in self.ids:
                self.repeated_ids.append(values["id"])
            self.ids.add(values["id"])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        # Resources the browser fetches (a canonical <link> is a name, not a request).
        fetched_link = tag == "link" and values.get("rel", "") in (
            "stylesheet", "preload", "modulepreload", "icon", "manifest", "prefetch")
        if tag in ("script", "img", "iframe", "source") and "src" in values:
            self.sources.append(values["src"])
        if fetched_link and "href" in values:
            self.sources.append(values["href"])
        if "data-calc" in values:
            self.widgets.append(
                Widget(
                    values["data-calc"], values.get("id", ""), json.loads(values["data-example"])
                )
            )
        if "data-output" in values and self.widgets:
            self.widgets[-1].outputs[values["data-output"]] = values.get("data-value", "")
