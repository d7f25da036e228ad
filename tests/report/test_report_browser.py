"""The HTML report as a reader sees it: `tokenomics report`'s default page loaded in Chromium at a
laptop's width (1,366 px), checked for what a reader would stumble on.

Needs the Python package ``playwright`` and a Chromium binary; Playwright's own browser download
is not used: the test launches the system's Chromium (``TOKENOMICS_CHROMIUM``, else ``chromium``,
``chromium-browser`` or ``google-chrome`` on the PATH) through ``executable_path``. Without them the
test is skipped and says what to install::

    pip install playwright
    apt-get install -y chromium
"""

from __future__ import annotations

import os
import shutil

import pytest

pytestmark = pytest.mark.integration

#: A common laptop screen width [CSS px].
WIDTH_PX = 1366
INSTALL = "pip install playwright; apt-get install -y chromium (or set TOKENOMICS_CHROMIUM to a Chromium binary)"


def _chromium() -> str | None:
    env = os.environ.get("TOKENOMICS_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The default report (as `tokenomics report --out DIR` writes it) open in headless Chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip(f"no playwright package: {INSTALL}")
    exe = _chromium()
    if exe is None:
        pytest.skip(f"no Chromium browser found: {INSTALL}")
    from tokenomics.report import write_report

    out = tmp_path_factory.mktemp("report")
    write_report(out)  # the README quickstart's report: default hardware, models and draws
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": WIDTH_PX, "height": 900})
        pg.goto((out / "report.html").as_uri())
        pg.wait_for_load_state("load")
        yield pg
        browser.close()


def test_page_does_not_overflow_sideways(page):
    """No horizontal scroll bar on the page: wide tables scroll inside their own box."""
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), page.evaluate(
        "[document.scrollingElement.scrollWidth, window.innerWidth]")
    wrapped = page.eval_on_selector_all(
        "table", "ts => ts.map(t => t.parentElement.classList.contains('table-wrap') "
                 "&& getComputedStyle(t.parentElement).overflowX === 'auto')")
    assert len(wrapped) >= 10 and all(wrapped)


def test_visible_text_has_no_markdown_or_code_names(page):
    """No literal backticks (Markdown left unrendered) and no snake_case column names in headers;
    no e-notation in any cell."""
    import re

    text = page.inner_text("body")
    assert "`" not in text
    headers = page.eval_on_selector_all("th", "hs => hs.map(h => h.innerText)")
    assert len(headers) >= 60
    assert [h for h in headers if "_" in h] == []
    cells = page.eval_on_selector_all("td", "ds => ds.map(d => d.innerText)")
    assert [c for c in cells if re.search(r"\d[eE][+-]?\d", c)] == []


def test_every_image_loads(page):
    """The three figures are embedded and decoded by the browser (naturalWidth > 0), and none is
    wider than the page."""
    imgs = page.eval_on_selector_all(
        "img", "is => is.map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().right])")
    assert len(imgs) == 3
    assert all(done and w > 0 and right <= WIDTH_PX for done, w, right in imgs), imgs


def test_contents_links_every_section(page):
    """The contents list links each section heading by its id."""
    links = page.eval_on_selector_all("nav.contents a", "as => as.map(a => a.getAttribute('href'))")
    assert len(links) >= 8
    for href in links:
        assert page.query_selector(href) is not None, href
