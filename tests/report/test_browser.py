"""The report in a real browser (issue 19): Debian's headless Chromium, driven by Selenium (harness/report/browser.py).

One generated page (a refuted claim with a figure, a per-seed table, a criterion whose name is a <script>, a
baseline comparison with moves) is opened at the width the issue read it at. Skipped, with the reason, where
Chromium, chromedriver or selenium is missing; nothing is downloaded. The screenshot of the summary goes to
the test's tmp dir, or to $REPORT_SCREENSHOT_DIR when set (e.g. reports/).
"""
from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from harness.record import baseline as B
from harness.report import browser
from harness.report import charts
from harness.report import html as report
from harness.record import results as R
from tests.report.test_html import claim, results

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))

EVIL = '<script>console.error("escaping failed")</script>'
SEED_ROWS = 150  # a per-seed table long enough to fill pages if it printed


def _figure_png() -> bytes:
    uri = charts._figure_png(lambda ax: (ax.plot([1, 2, 3], [3, 1, 2]), ax.set_title("does it decode?")))
    return base64.b64decode(uri.split(",", 1)[1])


def _make_report(root: Path) -> Path:
    (root / "figures" / "C4").mkdir(parents=True)
    (root / "figures" / "C4" / "curve.png").write_bytes(_figure_png())
    c4 = claim("C4", "refuted", figures=["figures/C4/curve.png"],
               tables={"per_seed": [{"seed": s, "step": s * 10, "accuracy": 0.5 + s / 1000} for s in range(SEED_ROWS)]})
    c4["criteria"].append({**c4["criteria"][0], "name": EVIL, "passed": False, "refuted": True, "outcome": "refuted",
                           "fingerprint": "g", "test": "a long test description " * 8})
    c4["criteria"].append({**c4["criteria"][0], "name": "scaled_beats_unscaled", "kind": "superiority",
                           "metric": "held-out loss (nats)", "better": "lower", "arms": ["unscaled", "scaled"], "measured": -0.4,
                           "ci": [-0.6, -0.2], "margin": 0.1, "deciding_part": "kv_lookup d_k=256", "passed": False,
                           "refuted": True, "outcome": "refuted", "firmness": 0.99, "fingerprint": "h"})
    base_c4 = claim("C4", "supported")
    base_c4["criteria"].append({**base_c4["criteria"][0], "name": EVIL, "outcome": "passed", "fingerprint": "g"})
    c4["regression"] = B.compare_claim(c4, base_c4, whole_claim=True)
    c5 = claim("C5", statement="multi-head attention recovers resolution", tables={"tiny": [{"a": 1}]})
    c5["regression"] = B.compare_claim(c5, claim("C5"), whole_claim=True)
    q2 = claim("Q2", "answered no", kind="question")
    q2["regression"] = B.compare_claim(q2, claim("Q2", "answered no", kind="question"), whole_claim=True)
    res = results(C4=c4, C5=c5, Q2=q2)
    res["run"].update(baseline="reports/baseline.json", baseline_profile="smoke", baseline_not_run=["R1"])
    R.write_json_atomic(root / "results.json", res)
    assert report.main([str(root / "results.json")]) == 0
    return root / "index.html"


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    return _make_report(tmp_path_factory.mktemp("report")).as_uri()


@pytest.fixture(scope="module")
def driver():
    with browser.chromium() as d:
        yield d


def open_page(driver, url: str) -> None:
    driver.get("about:blank")
    driver.get(url)
    driver.get_log("browser")  # drop what an earlier test left
    driver.get(url)


def screenshot(driver, url: str, out: Path) -> bool:
    """``save_screenshot``, once more after reopening the page where Chrome's capture times out: on a loaded 2-core
    box its renderer can miss the capture's deadline ("aborted by navigation", clean-clone CI of bf13418), which says
    nothing about the page."""
    from selenium.common.exceptions import TimeoutException

    try:
        return driver.save_screenshot(str(out))
    except TimeoutException:
        open_page(driver, url)
        return driver.save_screenshot(str(out))


def broken_images(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt || i.src.slice(0, 40))")


def severe_logs(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def top_of(driver, element_id: str) -> float:
    return driver.execute_script("return document.getElementById(arguments[0]).getBoundingClientRect().top", element_id)


def test_every_image_decodes_and_the_console_is_clean(driver, page):
    open_page(driver, page)
    assert driver.execute_script("return document.images.length") >= 1
    assert broken_images(driver) == []
    assert severe_logs(driver) == []


def test_the_checks_catch_a_broken_image_and_a_console_error(driver, page):
    """A check that cannot fail is a defect: plant both faults on the page and see them reported."""
    open_page(driver, page)
    driver.execute_script("""
        const img = document.createElement('img'); img.alt = 'planted'; img.src = 'data:image/png;base64,AAAA';
        document.body.appendChild(img); console.error('planted error');""")
    driver.execute_async_script("const done = arguments[0]; setTimeout(done, 200)")
    assert broken_images(driver) == ["planted"]
    assert any("planted error" in m for m in severe_logs(driver))


def test_every_contents_link_lands_on_its_section(driver, page):
    open_page(driver, page)
    links = driver.execute_script(
        "return [...document.querySelectorAll('nav.contents a')].map(a => a.getAttribute('href'))")
    claims = {"#claim-C4", "#claim-C5", "#claim-Q2"}
    assert claims | {"#summary", "#against-baseline", "#bearing", "#run"} <= set(links)
    height, max_scroll = driver.execute_script(
        "return [innerHeight, document.documentElement.scrollHeight - innerHeight]")
    for href in links:
        driver.find_element("css selector", f'nav.contents a[href="{href}"]').click()
        assert driver.execute_script("return location.hash") == href
        top, scrolled = top_of(driver, href[1:]), driver.execute_script("return scrollY")
        # at the top of the window, or as near it as the end of the page allows
        assert -2 <= top <= 16 or (scrolled >= max_scroll - 2 and 0 <= top < height), (href, top)
    back = driver.find_element("css selector", "#claim-C5 .back a[href='#summary']")
    driver.execute_script("arguments[0].scrollIntoView()", back)
    back.click()
    assert -2 <= top_of(driver, "summary") <= 16


def test_a_collapsed_block_opens(driver, page):
    open_page(driver, page)
    block = driver.find_element("css selector", "#claim-C4 details.evidence:has(table.data)")
    table = block.find_element("css selector", "table.data")
    assert block.get_attribute("open") is None and not table.is_displayed()
    block.find_element("css selector", "summary").click()
    assert block.get_attribute("open") is not None and table.is_displayed()
    assert len(table.find_elements("css selector", "tbody tr")) == SEED_ROWS


def test_claim_id_verdict_and_a_script_named_criterion_render_as_text(driver, page):
    open_page(driver, page)
    heading = driver.find_element("css selector", "#claim-C4 h2").text
    assert heading.startswith("C4") and "refuted" in heading
    names = [e.text for e in driver.find_elements("css selector", "#claim-C4 table.criteria td.name")]
    assert EVIL in names
    assert driver.execute_script("return document.scripts.length") == 0
    moved = driver.find_element("css selector", "#against-baseline").text
    assert EVIL in moved and "R1" in moved


EFFECT = ("Refuted in this run: 1/√d_k is 0.4 nats [0.2, 0.6] worse than no scaling in held-out loss on key-value "
          "lookup at d_k 256 (needed: more than 0.1 nats, the margin).")


def test_the_summary_speaks_in_effects_and_an_answer_is_not_a_failure(driver, page):
    """Issue 28: the summary's column is the deciding effect in words; a question's 'answered no' badge is
    neutral, not the colour of a refuted claim."""
    open_page(driver, page)
    row = driver.find_element("css selector", "table.summary tbody tr:has(a[href='#claim-C4'])")
    assert EFFECT in row.text
    header = driver.find_element("css selector", "table.summary thead").text
    assert "what was found" in header and "headline" not in header

    def colour(cid: str) -> str:
        return driver.execute_script(
            "return getComputedStyle(document.querySelector(arguments[0])).backgroundColor",
            f"table.summary tr:has(a[href='#claim-{cid}']) .badge")

    failure = colour("C4")
    assert failure == "rgb(198, 40, 40)"  # the refuted claim keeps the failure colour
    answered_no = colour("Q2")
    assert driver.find_element("css selector", "table.summary tr:has(a[href='#claim-Q2']) .badge").text == "answered no"
    assert answered_no not in (failure, "rgb(46, 125, 50)"), answered_no  # neither failure red nor pass green


def test_columns_keep_their_width(driver, page):
    """Issue 19: the summary's id column never wraps ('C' over '1'); at 700 px the page does not overflow."""
    open_page(driver, page)
    lines = driver.execute_script(
        "return [...document.querySelectorAll('table.summary td.id a')].map(a => a.getClientRects().length)")
    assert lines and all(n == 1 for n in lines)
    try:
        driver.set_window_size(700, 1000)
        assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth")
        lines = driver.execute_script(
            "return [...document.querySelectorAll('table.summary td.id a')].map(a => a.getClientRects().length)")
        assert all(n == 1 for n in lines)
    finally:
        driver.set_window_size(*browser.WINDOW)


def test_printing_leaves_collapsed_blocks_out(driver, page):
    """The print stylesheet's rule: what is collapsed is not printed (a one-line pointer is), what is open is."""
    open_page(driver, page)
    collapsed = browser.pdf_pages(browser.print_pdf(driver))
    driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    expanded = browser.pdf_pages(browser.print_pdf(driver))
    assert 1 <= collapsed <= 4 and expanded > collapsed, (collapsed, expanded)


def test_screenshot_of_the_summary(driver, page, tmp_path):
    open_page(driver, page)
    out = Path(os.environ.get("REPORT_SCREENSHOT_DIR") or tmp_path) / "report-summary.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    assert screenshot(driver, page, out)
    png = out.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == browser.WINDOW[0]
