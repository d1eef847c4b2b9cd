"""The ``bigmodel`` MkDocs plugin: calculator fences, pre-rendered results, the runtime.

Build time only: nothing here reaches the browser except what it writes into the site.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mkdocs.config.config_options import ExtraScriptValue
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority, get_plugin_logger
from mkdocs.structure.files import File
from pymdownx.superfences import SuperFencesException

import calculators
from bigmodel_guide import bundle, editions
from bigmodel_guide.config import CalculatorsConfig
from bigmodel_guide.fence import FENCE_NAME, FenceError, check_page, parse_fence
from bigmodel_guide.hardware_page import HARDWARE_PATH, hardware_markdown
from bigmodel_guide.reference import REFERENCE_INDEX, reference_nav, reference_pages
from bigmodel_guide.render import FoldedInputError, TakenInput, render_widget
from bigmodel_guide.validation import VALIDATION_PATH, CheckFailedError, validation_markdown
from bigmodel_guide.validation_speed import RunFailedError
from bigmodel_guide.widget_data import widget_files
from calculators.core import i18n

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jinja2 import Environment
    from markdown import Markdown
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    from calculators.core.calculator import Calculator, Result

log = get_plugin_logger(__name__)


def content_security_policy(runtime_url: str | None) -> str:
    """The policy the site ships: scripts and workers from its own origin only, plus
    WebAssembly compilation for Pyodide; a configured runtime_url's origin is added."""
    extra = ""
    if runtime_url:
        parts = urlsplit(runtime_url)
        extra = f" {parts.scheme}://{parts.netloc}"
    return (
        f"default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{extra}; "
        f"worker-src 'self'; connect-src 'self'{extra}; img-src 'self' data:; "
        "style-src 'self' 'unsafe-inline'; font-src 'self'; object-src 'none'; "
        "base-uri 'self'; form-action 'self'"
    )
def expand_reference_nav(nav: list[Any], registry: Mapping[str, Any]) -> dict[str, str]:
    """In ``nav`` (as in mkdocs.yml), the entry of the reference's first page becomes a
    section: that page, then one page per calculator (generated, so listed from the
    registry rather than by hand). Returns each page file's title, for the reference's
    links to chapters."""
    titles: dict[str, str] = {}

    def walk(items: list[Any]) -> None:
        for i, item in enumerate(items):
            if isinstance(item, dict):
                for title, target in item.items():
                    if isinstance(target, list):
                        walk(target)
                    elif target == REFERENCE_INDEX:
                        items[i] = {title: reference_nav(registry)}
                    elif isinstance(target, str):
                        titles[target] = title

    walk(nav)
    return titles


SUPERFENCES = "pymdownx.superfences"
LOADER_PATH = "assets/calculators/loader.js"


class CalculatorsPlugin(BasePlugin[CalculatorsConfig]):  # type: ignore[no-untyped-call]
    """Turns ```calculator fences into forms with build-time results."""

    def __init__(self) -> None:
        self._env: Environment | None = None
        self._page: str = ""
        self._ids: dict[str, int] = {}
        self._results: dict[str, Result] = {}
        self._project_dir = Path.cwd()
        self._chapter_titles: dict[str, str] = {}
        self._lang = i18n.SOURCE_LANGUAGE
        self._registry: Mapping[str, Calculator] = calculators.REGISTRY

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if not self.config.enabled:
            return config
        if SUPERFENCES not in config.markdown_extensions:
            raise PluginError(f"the bigmodel plugin needs the {SUPERFENCES} extension")
        self._project_dir = Path(config.config_file_path or ".").resolve().parent
        editions.keep_root_pages(config)
        fences = config.mdx_configs.setdefault(SUPERFENCES, {}).setdefault("custom_fences", [])
        fences[:] = [f for f in fences if f.get("name") != FENCE_NAME]
        fences.append({"name": FENCE_NAME, "class": FENCE_NAME, "format": self._format_fence})
        config.extra["bigmodel_csp"] = content_security_policy(self.config.runtime_url)
        if config.nav is not None:
            self._chapter_titles = expand_reference_nav(config.nav, calculators.REGISTRY)
        loader = ExtraScriptValue(LOADER_PATH)
        loader.type = "module"
        if all(str(s) != LOADER_PATH for s in config.extra_javascript):
            config.extra_javascript.append(loader)
        return config

    # After the i18n plugin (-100), which cannot place generated files (they have no
    # source path): each edition's generated pages are placed here (editions.py).
    @event_priority(-110)
    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        if not self.config.enabled:
            return files
        self._lang = editions.building_language(config)
        editions.drop_duplicate_assets(files, self._lang)
        return self._add_generated(files, config)

    def _generated(self, config: MkDocsConfig, path: str, content: str) -> File:
        file = File.generated(config, path, content=content)
        return editions.place_in_edition(file, self._lang, config)

    def _add_generated(self, files: Files, config: MkDocsConfig) -> Files:
        # Pages are rendered before on_env fires, so the fences use the theme's own
        # environment (custom_dir overrides included) from here on.
        self._env = config.theme.get_env()
        editions.install_in_jinja(self._env, self._lang)
        self._registry = editions.localised_registry(self._lang)
        config.extra["bigmodel_ui_text"] = editions.script_words(self._lang)
        with i18n.language(self._lang):
            return self._add_pages(files, config)

    def _add_pages(self, files: Files, config: MkDocsConfig) -> Files:
        assert self._env is not None
        titles = editions.translated_titles(config, self._chapter_titles)
        pages = reference_pages(self._env, self._registry, titles)
        for path, markdown in pages.items():
            files.append(self._generated(config, path, markdown))
        try:
            validation = validation_markdown(self._env, Path(config.docs_dir))
        except CheckFailedError as err:
            raise PluginError(f"a published figure is no longer reproduced: {err}") from None
        except RunFailedError as err:
            raise PluginError(f"a published measured run cannot be predicted: {err}") from None
        files.append(self._generated(config, VALIDATION_PATH, validation))
        files.append(self._generated(config, HARDWARE_PATH, hardware_markdown()))
        for path, content in widget_files(self._env, self._registry, self._lang).items():
            files.append(File.generated(config, path, content=content))
        return files

    def on_page_markdown(
        self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        self._page = page.file.src_uri
        self._ids = {}
        self._results = {}
        try:
            check_page(markdown, page.file.src_uri)
        except FenceError as err:
            raise PluginError(f"calculator fence error in {err}") from None
        return markdown

    def _format_fence(
        self,
        source: str,
        language: str,
        css_class: str,
        options: dict[str, Any],
        md: Markdown,
        **kwargs: Any,
    ) -> str:
        """Superfences formatter: the widget with its results computed now, natively."""
        if self._env is None:
            raise SuperFencesException("calculator fence rendered before on_files")
        try:
            fence = parse_fence(source)  # already checked with its line in on_page_markdown
        except FenceError as err:
            # Superfences swallows other exceptions and leaves the fence unrendered.
            raise SuperFencesException(f"{self._page}: {err}") from err
        calc = self._registry[fence.calc_id]
        base = fence.anchor or f"calc-{fence.calc_id.replace('_', '-')}"
        count = self._ids.get(base, 0) + 1
        self._ids[base] = count
        widget_id = base if count == 1 else f"{base}-{count}"
        with i18n.language(self._lang):
            result = calc.compute(fence.overrides)
        self._results[widget_id] = result
        try:
            takes = {name: self._taken(name, source, result)
                     for name, source in fence.takes.items()}
            with i18n.language(self._lang):
                return render_widget(self._env, calc, result, widget_id, fence.overrides,
                                     takes=takes)
        except FoldedInputError as err:
            raise SuperFencesException(f"{self._page}: {err}") from err

    def _taken(self, name: str, source: tuple[str, str], result: Result) -> TakenInput:
        """What a fence's ``takes:`` input says in the widget, after checking that the
        example's value is the output of the widget above it names."""
        anchor, output = source
        above = self._results.get(anchor)
        if above is None:
            raise SuperFencesException(f"{self._page}: `takes: {name}:` names {anchor!r}, "
                                       "not a widget above it on this page")
        source_calc = above.calculator
        labels = {o.name: o.label for o in source_calc.outputs}
        if output not in labels:
            raise SuperFencesException(f"{self._page}: `takes: {name}:` names {output!r}, "
                                       f"not an output of {source_calc.id!r}")
        given, wanted = result.inputs[name], above.value(output)
        if given != wanted:
            raise SuperFencesException(
                f"{self._page}: widget {anchor!r} gives {output} = {wanted!r}, but the "
                f"example below it that takes it says {name} = {given!r}")
        return TakenInput(name, anchor, output, source_calc.title, labels[output])

    def on_page_content(
        self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        # The widgets' ids are in raw HTML that Markdown stashes, out of the anchors
        # MkDocs collects: register them, so that links to a widget validate.
        if page.present_anchor_ids is not None:
            page.present_anchor_ids.update(self._results)
        return html

    # After the i18n plugin's post-build step (-100), which builds the other editions
    # (each runs this too: skipped, one runtime serves both) and merges every edition's
    # search entries into the root's index, which is split here.
    @event_priority(-200)
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if not self.config.enabled or editions.in_nested_build(config):
            return
        if config.plugins.get(editions.I18N_PLUGIN) is not None:
            counts = editions.split_search_index(Path(config.site_dir))
            log.info("search entries per edition: %s", counts)
            editions.write_sitemaps(Path(config.site_dir), config.site_url or "/")
        root = self._project_dir
        try:
            made = bundle.prepare(
                package_dir=Path(calculators.__file__).parent,
                pyodide_dir=root / self.config.pyodide_dir,
                tool=root / self.config.lockfile_tool,
                cache_dir=root / self.config.cache_dir,
                snapshot=self.config.memory_snapshot and self.config.runtime_url is None,
            )
            bundle.install(
                made, root / self.config.pyodide_dir, Path(config.site_dir), self.config.runtime_url
            )
        except bundle.BundleError as err:
            raise PluginError(str(err)) from None
        log.info("calculators bundle: %s", made.wheel.name)
