"""Report pages in a real browser: Debian's Chromium, driven by Playwright (which is told to use
that Chromium and never downloads one). Each page must load without a console error or any
request but its own file, show its sections and figures at a non-zero size, and be saved as a
screenshot.

``HWGEN_SCREENSHOTS=DIR`` keeps the screenshots in DIR as ``report_<kind>.png`` (docs/ keeps
one per kind: ``HWGEN_SCREENSHOTS=docs pytest tests/test_report_browser.py``); otherwise they go
to the test's temporary folder. Without Chromium the tests are skipped, except in CI
(``CI`` set), where ``.ci/run`` installs it.
"""

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from hwgen.cli.main import main

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("needs Debian's chromium (`apt-get install chromium`)", allow_module_level=True)
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright

# Flags that keep a headless Chromium from reaching out on its own (updates, sync, metrics).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# The top of the page goes into docs/: the headline and the first figures.
DOCS_HEIGHT = 2200
# Where the screenshots are kept, resolved before a test changes folder.
KEEP = Path(os.environ["HWGEN_SCREENSHOTS"]).resolve() if os.environ.get("HWGEN_SCREENSHOTS") \
    else None

REPORTS = {
    "sim": (["sim", "dilation", "--buffer", "line", "--unroll", "4", "--width", "64",
             "--height", "16", "--mem-bandwidth", "6", "--mem-latency", "3", "--mem-jitter", "4"],
            {"sim": ["fsm-fsm.ctrl", "streams", "histogram-rd_latency", "cycle-roofline"]}),
    "run": (["run", "gemm", "--variant", "naive", "--threads", "4", "--dim", "4"],
            {"run": ["thread-shares", "thread-timeline", "cycle-roofline"]}),
    "roofline": (["roofline", "dilation", "--board", "ex500", "--buffer", "smart,line",
                  "--unroll", "1,2,4", "--image", "64x16", "-q"],
                 {"roofline": ["roofline"]}),
}


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def _make(kind):
    """The page of ``kind``, made in the current folder (the page names its sources as given)."""
    argv, _ = REPORTS[kind]
    if kind == "roofline":
        argv = [*argv, "--out", "roofline"]
    assert main([*argv, "--report", f"{kind}.html"]) == 0
    return Path(f"{kind}.html").resolve()


def _screenshot(page, kind, tmp_path):
    path = (KEEP or tmp_path) / f"report_{kind}.png"
    page.screenshot(path=str(path), full_page=True)
    if KEEP:
        # What a reader sees first, in 256 colours: a small file for the repository.
        with Image.open(path) as image:
            top = image.crop((0, 0, image.width, min(image.height, DOCS_HEIGHT)))
        top.quantize(256).save(path, optimize=True)
    return path


@pytest.mark.parametrize("kind", list(REPORTS))
def test_report_opens_in_chromium_offline_with_every_figure(kind, browser, tmp_path,
                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _make(kind)
    page = browser.new_page()
    requests, problems = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda message: message.type in ("error", "warning")
            and problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.goto(path.as_uri(), wait_until="load")

    assert requests == [path.as_uri()]
    assert problems == []
    _, expected = REPORTS[kind]
    for section, figures in expected.items():
        box = page.locator(f"section[data-kind={section}]").bounding_box()
        assert box and box["width"] > 600 and box["height"] > 300
        for name in figures:
            svg = page.locator(f"section[data-kind={section}] figure[data-figure='{name}'] svg")
            assert svg.count() == 1, name
            box = svg.bounding_box()
            assert box and box["width"] > 200 and box["height"] > 100, (name, box)
    assert page.locator(".card").count() >= 6
    # Nothing spills out of the page sideways but what scrolls in its own table box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    shot = _screenshot(page, kind, tmp_path)
    with Image.open(shot) as image:
        assert image.width == 1280 and image.height > 800
        assert len(image.convert("RGB").getcolors(1 << 20) or []) > 20   # not a blank page
    page.close()
