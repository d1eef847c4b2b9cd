"""``make bench``: how fast the live guide is, in headless Chromium on 127.0.0.1.

A benchmark, not a test: it prints a table and writes the figures as JSON, whose path
it prints last. Cold runs use a fresh browser profile each; a bare reference page that
loads the same pinned Pyodide in a module worker and evaluates one expression runs in
the same session, so ``cold_ratio_vs_bare`` compares like with like.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import http.server

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import QuietHandler, start_server  # noqa: E402
from tests.e2e.conftest import CHROMIUM_ARGS, chromium_path  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
#: Sessions for the second-page figure: each is cheap, and one navigation varies a lot
#: on a small machine (garbage collection, scheduling), so take more of them.
NAV_RUNS = int(os.environ.get("BENCH_NAV_RUNS", str(max(RUNS, 9))))
PAGE = "/compute/"
WIDGET = "#gpt3-worked-example"
#: Instant navigation from a live calculator page to these (nav link suffix, widget),
#: timed inside the page (click -> new widget bound -> submit -> live result), in this
#: order within one session. The first is the headline figure: from the dense-models
#: chapter (20 widgets) back to the training-compute chapter (6), the lightest
#: chapter with calculators. Then every other chapter with calculators, each reached
#: from the one before, and the generated reference's page for training compute (one
#: page per calculator; this figure always used that calculator's widget there). The
#: first widget of a page is the one timed: it is the one in view after the swap.
SECOND_PAGES = (
    ("compute/", "#gpt3-worked-example"),
    ("dense/", "#gpt3-parameters"),
    ("sparse/", "[data-calc]"),
    ("communication/", "[data-calc]"),
    ("network/", "[data-calc]"),
    ("moe/", "[data-calc]"),
    ("long-runs/", "[data-calc]"),
    ("capstone/", "[data-calc]"),
    ("reference/calculators/training-compute/", "#ref-training-compute"),
)
#: How long a reader reads the first result before following a link, in the second run
#: of the flow (a figure for comparison, not a target).
READ_S = 5.0
FIRST_LIVE_PAGE = ("/dense/", "#gpt3-parameters [name=layers]", "80")
RECOMPUTE_PAGE = "/compute/"
#: The Chinese edition's prefix: its pages are timed by the same flows.
ZH = "/zh"
NAVIGATE_AND_COMPUTE = """async ([href, sel]) => {
  // The widgets on screen now, held by reference: marking them (an attribute) would
  // make the page restyle them and add to what is measured.
  const before = new Set(document.querySelectorAll("[data-calc]"));
  const link = [...document.querySelectorAll("a.md-nav__link")]
    .find((a) => a.getAttribute("href").endsWith(href));
  // MutationObservers report in the same task as the change, so neither waiting for
  // the new widget nor for its result adds a frame or a timer tick to the figure.
  const whenState = (target, test) => new Promise((resolve) => {
    const check = () => {
      const found = test();
      if (found) { observer.disconnect(); resolve(found); }
    };
    const observer = new MutationObserver(check);
    observer.observe(target, {
      subtree: true, childList: true, attributes: true, attributeFilter: ["data-state"],
    });
    check();
  });
  const started = performance.now();
  const bound = whenState(document.body, () => [...document.querySelectorAll(sel)]
    .find((w) => !before.has(w) && w.dataset.state === "ready"));
  link.click();
  const widget = await bound;
  // Submit the moment the new widget is bound: when the page itself recomputes a widget
  // whose inputs differ from the example. The figure ends when the live result is in.
  const live = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (widget.dataset.state === "ready") { observer.disconnect(); resolve(); }
    });
    observer.observe(widget, { attributes: true, attributeFilter: ["data-state"] });
  });
  widget.querySelector("form").requestSubmit();
  await live;
  return performance.now() - started;
}"""
FIRST_LIVE = "bm:first-live"
#: The targets set for the live guide (issue 7): figure -> the most it may be.
TARGETS = {
    "cold_ratio_vs_bare": 1.10,
    "second_page_live_ms": 150.0,
    "recompute_p95_ms": 16.0,
}

BARE_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>bare</title>
<script type="module" src="bare.js"></script></head><body><p id="out">…</p></body></html>"""
BARE_MAIN = """const worker = new Worker(new URL("./worker.js", import.meta.url), {type: "module"});
worker.onmessage = (e) => {
  performance.mark("bm:first-live");
  document.getElementById("out").textContent = e.data;
};
"""
BARE_WORKER = """const indexURL = new URL("../pyodide/", import.meta.url).href;
const { loadPyodide } = await import(indexURL + "pyodide.mjs");
const pyodide = await loadPyodide({ indexURL });
postMessage(String(pyodide.runPython("1 + 1")));
"""


class CountingHandler(QuietHandler):
    """Serves the site and counts the bytes of every response body it sends."""

    sent: list[tuple[float, str, int]]  # set on the class by serve()

    def copyfile(self, source: Any, outputfile: Any) -> None:
        start = source.tell()
        # The browser may go away mid-response (closing a context): count what went.
        with contextlib.suppress(ConnectionError):
            super().copyfile(source, outputfile)
        self.sent.append((time.monotonic(), self.path, source.tell() - start))


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, list[tuple[float, str, int]]]:
    sent: list[tuple[float, str, int]] = []
    handler = type("Handler", (CountingHandler,), {"sent": sent})
    return start_server(site, handler), sent


def build(site: Path, site_url: str) -> float:
    """Build for the bench server's origin (Material's instant navigation needs it)."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "SITE_URL": site_url},
    )
    return time.perf_counter() - started


def mark_ms(page: Any, name: str = FIRST_LIVE, timeout_s: float = 120.0) -> float:
    """The page's own timestamp of a performance mark (ms since navigation start).

    Polled with evaluate (not wait_for_function, whose string predicates the site's
    Content-Security-Policy forbids); the poll interval does not affect the figure.
    """
    deadline = time.monotonic() + timeout_s
    script = f"(performance.getEntriesByName('{name}')[0] || {{}}).startTime ?? null"
    while time.monotonic() < deadline:
        found = page.evaluate(script)
        if found is not None:
            return float(found)
        time.sleep(0.02)
    raise TimeoutError(f"no {name} mark within {timeout_s} s")


def cold_run(playwright: Any, url: str, ours: bool, value: str = "70B") -> tuple[float, float]:
    """Fresh profile: navigation -> first live result; then a warm-cache reload."""
    with tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        page = context.new_page()
        results = []
        for _ in range(2):  # cold, then warm HTTP cache in the same profile
            page.goto(url, wait_until="domcontentloaded")
            if ours:
                page.fill(f"{WIDGET} [name=params]", value)
            results.append(mark_ms(page))
        context.close()
    return results[0], results[1]


def second_pages(playwright: Any, base: str, read_s: float = 0.0,
                 edition: str = "") -> dict[str, float]:
    """A fresh browser: a first live result, then instant navigation to each second page.

    At once (the target's figure), or after read_s seconds, as a reader reads the first
    result; ``edition`` "/zh" runs the same flow in the Chinese edition. In the first
    seconds after the runtime starts, the browser compiles its WebAssembly's hot functions
    again, optimised, in the background (about 1 s of one core during these navigations,
    traced; the idle warm-up adds to it), so on a two-core machine a navigation made at
    once competes with that compilation.
    """
    browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    page = browser.new_page(bypass_csp=True)
    path, field, value = FIRST_LIVE_PAGE
    page.goto(base + edition + path)
    page.fill(field, value)
    mark_ms(page)
    time.sleep(read_s)
    by_page = {
        href: float(page.evaluate(NAVIGATE_AND_COMPUTE, [href, widget]))
        for href, widget in SECOND_PAGES
    }
    browser.close()
    return by_page


def recompute_latencies(playwright: Any, base: str, paced: bool,
                        edition: str = "") -> list[float]:
    """200 input changes on one widget, each timed inside the page to its live result.

    paced: each change waits for the frame that shows the last result, as every edit of a
    reader does (keystrokes come tens of milliseconds apart, and a typed edit waits 120 ms
    more). Back to back (paced False, the only loop before): the next change comes in the
    task that applied the last result, and requestSubmit first lays out that result
    (Chromium's form submission forces style and layout), so each figure also carries the
    previous result's layout, 2-8 ms here, and the loop's tail is those layouts and
    garbage collection. Both are reported; the target holds the paced loop.
    """
    browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    page = browser.new_page(bypass_csp=True)
    page.goto(base + edition + RECOMPUTE_PAGE)
    page.fill(f"{WIDGET} [name=params]", "70B")
    mark_ms(page)
    latencies = page.evaluate(
        """async ([sel, paced]) => {
          const widget = document.querySelector(sel);
          const field = widget.querySelector("[name=params]");
          // After the next frame: a task queued from its animation-frame callback runs
          // once that frame is rendered.
          const shown = () => new Promise((resolve) => {
            requestAnimationFrame(() => setTimeout(resolve, 0));
          });
          const out = [];
          for (let i = 0; i < 200; i++) {
            if (paced) await shown();
            const done = new Promise((resolve) => {
              const obs = new MutationObserver(() => {
                if (widget.dataset.state === "ready") { obs.disconnect(); resolve(); }
              });
              obs.observe(widget, { attributes: true, attributeFilter: ["data-state"] });
            });
            field.value = `${100 + i}B`;
            const t0 = performance.now();
            field.form.requestSubmit();
            await done;
            out.push(performance.now() - t0);
          }
          return out;
        }""",
        [WIDGET, paced],
    )
    browser.close()
    return sorted(float(x) for x in latencies)


def _target(name: str, measured: float) -> dict[str, Any]:
    """A figure held to the limit ``TARGETS[name]``."""
    return {"at_most": TARGETS[name], "measured": measured, "met": measured <= TARGETS[name]}


def site_bytes(site: Path) -> dict[str, int]:
    """The built site's bytes, and those of the Chinese edition's own files (its pages,
    search index and sitemaps: the runtime and assets are the English build's)."""
    files = [p for p in site.rglob("*")
             if p.is_file() and not p.is_relative_to(site / "bench-bare")]
    return {"all": sum(p.stat().st_size for p in files),
            "zh": sum(p.stat().st_size for p in files if p.is_relative_to(site / "zh"))}


def percentile(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted figures (share 0.5: the median)."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


#: What only the live runtime loads: Pyodide, the wheel, the snapshot, the worker.
RUNTIME_PATHS = ("/pyodide/", "/assets/calculators/worker.js", "/runtime-config.js")


def transfer(
    playwright: Any, base: str, sent: list[tuple[float, str, int]]
) -> tuple[int, int, int]:
    """Bytes sent before the first interaction (and how many of them were the runtime's),
    and in all once the runtime has loaded and answered."""
    browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    sent.clear()
    page.goto(base + PAGE, wait_until="networkidle")
    page.wait_for_timeout(1500)  # an idle reader: nothing more should load
    before = sum(size for _, _, size in sent)
    runtime_before = sum(size for _, path, size in sent if any(p in path for p in RUNTIME_PATHS))
    page.fill(f"{WIDGET} [name=params]", "70B")
    mark_ms(page)
    page.wait_for_load_state("networkidle")
    after = sum(size for _, _, size in sent)
    browser.close()
    return before, after, runtime_before


def _preset(calc_id: str, preset_id: str, **inputs: object) -> dict[str, object]:
    """The inputs a preset of the guide gives a calculator (its published figures and
    their sources are in calculators/catalogues/preset_entries.py), with ``inputs`` on top."""
    import calculators
    from calculators.catalogues import presets

    calc = calculators.REGISTRY[calc_id]
    return {**presets.assignments(calc, presets.get(preset_id)), **inputs}


#: The guide's heaviest calls, searches a page waits on (label, calculator, inputs).
#: Timed here, not in the tests: a wall-clock assertion fails on a loaded CI machine;
#: the unit tests bound each search's work (layouts costed) instead.
HEAVY_CALLS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("planner, Llama 3 405B, 131,072 tokens, 16,384 H100s", "parallel_plan",
     _preset("parallel_plan", "llama3_405b", seq_len=131072, num_gpus=16384,
             gpu="h100_sxm")),
    ("planner, Llama 3 405B, 8,192 tokens, 16,384 H100s", "parallel_plan",
     _preset("parallel_plan", "llama3_405b", num_gpus=16384, gpu="h100_sxm")),
    ("planner, GPT-3 on 4,096 GPUs", "parallel_plan", {"num_gpus": 4096, "global_batch": 4096}),
    ("MoE planner, DeepSeek-V3 on 2,048 GPUs", "moe_plan", {}),
    ("sizing, GPT-3 in 34 days (capstone)", "cluster_sizing", {"goodput": 1}),
    ("sizing, Llama 3 70B, deadline missed", "cluster_sizing",
     _preset("cluster_sizing", "llama3_70b", gpu="h100_sxm", deadline_days=30,
             global_batch=512, utilization=0.5, flops_per_param_token=6)),
    ("RL step, DeepSeek-V3 on 512 H800, fastest split", "rl_step",
     _preset("rl_step", "deepseek_v3", gpu="h800", num_gpus=512, placement="one_step_off",
             weight_precision="fp8", attention_parallel="dp")),
    ("rollout, Llama 3 70B on 64 H100", "rollout", _preset("rollout", "llama3_70b")),
    ("sizing, a trillion-parameter sparse model", "cluster_sizing",
     {"model_kind": "sparse", "num_tables": 1000, "rows_per_table": 93.75e6,
      "embedding_dim": 128, "gpu": "h100_sxm"}),
)
#: The slowest in-bounds calls an adversarial search found (issue 36: random inputs with
#: edges, then a search for the slowest), each now bounded in its work; a reader who
#: reaches one must get an answer well inside the page's 10 s watchdog.
WORST_CALLS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("worst: MoE sizing, hidden 229,930", "cluster_sizing",
     {"model_kind": "moe", "layers": 141, "hidden": 229930, "deadline_days": 460.19}),
    ("worst: MoE sizing, 100,000 experts on TPU7x", "cluster_sizing",
     {"model_kind": "moe", "routed_experts": 100000, "gpu": "tpu_v7"}),
    ("worst: MoE sizing, 25-day miss on a thin fabric", "cluster_sizing",
     {"model_kind": "moe", "layers": 61, "hidden": 7168, "vocab": 129280, "heads": 128,
      "ffn_hidden": 18432, "gated_mlp": True, "tied_embeddings": False, "seq_len": 4096,
      "global_batch": 3840, "tokens": "14.8T", "gpu": "h100_sxm", "deadline_days": 25,
      "utilization": "34.6%", "goodput": 1, "nic_bandwidth": "19.6 GB/s"}),
    ("worst: MoE planner, 6,754 layers", "moe_plan", {"layers": 6754}),
    ("worst: MoE planner, hidden 1,000,000 (nothing fits)", "moe_plan",
     {"gpus_per_node": 4, "hidden": 1000000}),
    ("worst: planner, 10,000 layers, 8M tokens", "parallel_plan",
     {"global_batch": 15360, "layers": 10000, "seq_len": 8388608, "top": 8}),
    ("worst: sizing, 9,933 layers of 5S1F, 5.5M tokens", "cluster_sizing",
     {"layers": 9933, "heads": 1, "seq_len": 5531795, "layer_pattern": "5S1F",
      "attention_window": 1157076, "norms_per_layer": 1, "tied_embeddings": False,
      "optimizer": "adamw_8bit", "utilization": 1.0, "flop_count": "6N"}),
    ("worst: fabric, 512-port switches", "fabric_sizing", {"switch_radix": 512}),
    ("worst: RL step, 21,838 prompts, 100,000 heads", "rl_step",
     {"rl_steps": 93, "reward_model": True, "memory_utilization": 0.188,
      "max_sequences": 215, "prompts": 21838, "prompt_tokens": 1,
      "total_params": 2.21e12, "hidden": 554, "heads": 100000, "kv_lora_rank": 1,
      "qk_rope_head_dim": 3, "experts_per_token": 4, "dense_layers": 30}),
)
#: Timed runs of each heavy call, after one untimed (the worker's runtime is warm by
#: the time a reader edits a planner).
CALL_RUNS = 5
#: What a reader may wait for one of them, in the browser's runtime.
HEAVY_CALL_PYODIDE_MS = 1000.0
#: What the worst cases may take: natively, a second; in the browser's runtime, half
#: the page's 10 s watchdog.
WORST_CALL_NATIVE_MS = 1000.0
WORST_CALL_PYODIDE_MS = 5000.0


def heavy_calls(calls: tuple[tuple[str, str, dict[str, object]], ...]) -> list[dict[str, Any]]:
    """Each of ``calls``, the median of CALL_RUNS runs natively and in the pinned
    Pyodide (in Node), each after an untimed first call."""
    import calculators
    from bigmodel_guide import bundle

    native: list[float] = []
    for _, calc_id, inputs in calls:
        calculators.compute(calc_id, **inputs)
        runs = []
        for _ in range(CALL_RUNS):
            started = time.perf_counter()
            calculators.compute(calc_id, **inputs)
            runs.append((time.perf_counter() - started) * 1000)
        native.append(statistics.median(runs))
    with tempfile.TemporaryDirectory() as tmp:
        made = bundle.prepare(
            ROOT / "calculators",
            ROOT / "node_modules/pyodide",
            ROOT / ".venv-pyodide/bin/pyodide",
            Path(tmp),
        )
        cases = Path(tmp) / "cases.json"
        cases.write_text(json.dumps(
            [[calc_id, inputs] for _, calc_id, inputs in calls
             for _ in range(1 + CALL_RUNS)]))
        done = subprocess.run(
            ["node", str(ROOT / "tests/pyodide/run_calculators.mjs"), str(made.wheel), str(cases)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    answers = json.loads(done.stdout)["answers"]
    per_call = 1 + CALL_RUNS
    return [
        {
            "call": label,
            "calculator": calc_id,
            "native_ms": native[i],
            "pyodide_ms": statistics.median(
                a["ms"] for a in answers[per_call * i + 1:per_call * (i + 1)]),
        }
        for i, (label, calc_id, _) in enumerate(calls)
    ]


def split_calls(timed: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The timings of HEAVY_CALLS + WORST_CALLS, each under its own key."""
    return {"heavy_calls": timed[:len(HEAVY_CALLS)], "worst_calls": timed[len(HEAVY_CALLS):]}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def cold_runs(playwright: Any, base: str) -> dict[str, list[float]]:
    """RUNS cold first live results of ours (and its warm reload), the bare runtime's and
    the Chinese edition's, interleaved so that all see the same machine load."""
    found: dict[str, list[float]] = {"ours": [], "warm": [], "bare": [], "zh": []}
    for _ in range(RUNS):
        ours_cold, ours_warm = cold_run(playwright, base + PAGE, ours=True)
        found["ours"].append(ours_cold)
        found["warm"].append(ours_warm)
        found["bare"].append(cold_run(playwright, base + "/bench-bare/", ours=False)[0])
        found["zh"].append(cold_run(playwright, base + ZH + PAGE, ours=True, value="700 亿")[0])
    return found


def navigation_runs(playwright: Any, base: str) -> dict[str, list[dict[str, float]]]:
    """NAV_RUNS sessions of the second-page flow: at once, after reading, and in the
    Chinese edition, interleaved."""
    found: dict[str, list[dict[str, float]]] = {"now": [], "read": [], "zh": []}
    for _ in range(NAV_RUNS):
        found["now"].append(second_pages(playwright, base))
        found["read"].append(second_pages(playwright, base, read_s=READ_S))
        found["zh"].append(second_pages(playwright, base, edition=ZH))
    return found


def main() -> int:
    if chromium_path() is None:
        print("chromium is missing: run `make bench` as root to install it", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="bigmodel-bench-"))
    site = work / "site"
    site.mkdir()
    server, sent = serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    build_s = build(site, base + "/")
    bare = site / "bench-bare"
    bare.mkdir()
    (bare / "index.html").write_text(BARE_HTML)
    (bare / "bare.js").write_text(BARE_MAIN)
    (bare / "worker.js").write_text(BARE_WORKER)
    with sync_playwright() as playwright:
        colds = cold_runs(playwright, base)
        navs = navigation_runs(playwright, base)
        latencies = recompute_latencies(playwright, base, paced=True)
        back_to_back = recompute_latencies(playwright, base, paced=False)
        zh_latencies = recompute_latencies(playwright, base, paced=True, edition=ZH)
        before, after, runtime_before = transfer(playwright, base, sent)
    cold, warm, bare_cold, zh_cold = colds["ours"], colds["warm"], colds["bare"], colds["zh"]
    second_runs, second_runs_read, zh_second_runs = navs["now"], navs["read"], navs["zh"]
    sizes = site_bytes(site)
    server.shutdown()
    headline = SECOND_PAGES[0][0]
    figures: dict[str, Any] = {
        "runs": RUNS,
        "navigation_runs": NAV_RUNS,
        "cold_live_ms": statistics.median(cold),
        "bare_cold_live_ms": statistics.median(bare_cold),
        "cold_ratio_vs_bare": statistics.median(cold) / statistics.median(bare_cold),
        "warm_live_ms": statistics.median(warm),
        "second_page_live_ms": statistics.median(run[headline] for run in second_runs),
        "second_page_live_ms_by_page": {
            href: spread([run[href] for run in second_runs]) for href, _ in SECOND_PAGES
        },
        # Not a target: the same flow after the reader has read the first result.
        "second_page_live_ms_after_reading_by_page": {
            href: spread([run[href] for run in second_runs_read]) for href, _ in SECOND_PAGES
        },
        # The Chinese edition: the same flows on its pages (same runtime, zh catalogue).
        "zh_cold_live_ms": statistics.median(zh_cold),
        "zh_cold_ratio_vs_bare": statistics.median(zh_cold) / statistics.median(bare_cold),
        "zh_second_page_live_ms_by_page": {
            href: spread([run[href] for run in zh_second_runs]) for href, _ in SECOND_PAGES
        },
        "zh_recompute_p50_ms": percentile(zh_latencies, 0.5),
        "zh_recompute_p95_ms": percentile(zh_latencies, 0.95),
        "site_bytes": sizes["all"],
        "site_bytes_zh_pages": sizes["zh"],
        "site_bytes_without_zh": sizes["all"] - sizes["zh"],
        "recompute_p50_ms": percentile(latencies, 0.5),
        "recompute_p95_ms": percentile(latencies, 0.95),
        "recompute_back_to_back_p50_ms": percentile(back_to_back, 0.5),
        "recompute_back_to_back_p95_ms": percentile(back_to_back, 0.95),
        "bytes_before_interaction": before,
        "bytes_after_runtime": after,
        "build_s": build_s,
        "spread": {
            "cold_live_ms": spread(cold),
            "bare_cold_live_ms": spread(bare_cold),
            "warm_live_ms": spread(warm),
            "second_page_live_ms": spread([run[headline] for run in second_runs]),
        },
        **split_calls(heavy_calls(HEAVY_CALLS + WORST_CALLS)),
        # Before the first interaction, no runtime byte: only the page and its loader.
        "runtime_bytes_before_interaction": runtime_before,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    shutil.rmtree(work, ignore_errors=True)
    out_dir = ROOT / "bench-results"
    out_dir.mkdir(exist_ok=True)
    out = out_dir / f"bench-{time.strftime('%Y%m%dT%H%M%S')}.json"
    slowest_page = max(p["median"] for p in figures["second_page_live_ms_by_page"].values())
    zh_slowest = max(p["median"] for p in figures["zh_second_page_live_ms_by_page"].values())
    figures["targets"] = {
        name: {"at_most": limit, "measured": figures[name], "met": figures[name] <= limit}
        for name, limit in TARGETS.items()
    } | {
        f"Pyodide {call['call']}": {
            "at_most": HEAVY_CALL_PYODIDE_MS, "measured": call["pyodide_ms"],
            "met": call["pyodide_ms"] <= HEAVY_CALL_PYODIDE_MS,
        }
        for call in figures["heavy_calls"]
    } | {
        f"{engine} {call['call']}": {
            "at_most": limit, "measured": call[key], "met": call[key] <= limit,
        }
        for call in figures["worst_calls"]
        for engine, key, limit in (("native", "native_ms", WORST_CALL_NATIVE_MS),
                                   ("Pyodide", "pyodide_ms", WORST_CALL_PYODIDE_MS))
    } | {
        # Every page's median, not only the headline's: the slowest must meet it too.
        "second_page_live_ms_slowest_page": {
            "at_most": TARGETS["second_page_live_ms"], "measured": slowest_page,
            "met": slowest_page <= TARGETS["second_page_live_ms"],
        },
        # The Chinese edition meets the same targets.
        "zh_cold_ratio_vs_bare": _target("cold_ratio_vs_bare", figures["zh_cold_ratio_vs_bare"]),
        "zh_second_page_live_ms_slowest_page": _target("second_page_live_ms", zh_slowest),
        "zh_recompute_p95_ms": _target("recompute_p95_ms", figures["zh_recompute_p95_ms"]),
        "runtime_bytes_before_interaction": {
            "at_most": 0, "measured": runtime_before, "met": runtime_before == 0,
        },
    }
    out.write_text(json.dumps(figures, indent=2))
    for key, value in figures.items():
        if isinstance(value, (int, float)):
            print(f"{key:<34} {value:,.3f}" if isinstance(value, float) else f"{key:<34} {value:,}")
    read_pages = figures["second_page_live_ms_after_reading_by_page"]
    for href, by_page in figures["second_page_live_ms_by_page"].items():
        read = read_pages[href]
        zh = figures["zh_second_page_live_ms_by_page"][href]
        print(
            f"{'second page ' + href:<34} {by_page['median']:,.1f} "
            f"({by_page['min']:,.1f}-{by_page['max']:,.1f}); after {READ_S:g} s "
            f"{read['median']:,.1f} ({read['min']:,.1f}-{read['max']:,.1f}); "
            f"zh {zh['median']:,.1f} ({zh['min']:,.1f}-{zh['max']:,.1f})"
        )
    for name, target in figures["targets"].items():
        verdict = "met" if target["met"] else "MISSED"
        measured, limit = target["measured"], target["at_most"]
        print(f"{'target ' + name:<34} {measured:,.3f} (at most {limit:,}): {verdict}")
    for call in figures["heavy_calls"] + figures["worst_calls"]:
        print(f"{'call ' + call['call']:<34} native {call['native_ms']:,.1f} ms, "
              f"Pyodide {call['pyodide_ms']:,.1f} ms")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
