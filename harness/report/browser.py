"""The report in a real browser (issue 19): Debian's headless Chromium driven by Selenium, never a download.

``tests/report/test_browser.py`` checks a generated page with it, and
``python -m harness.report.browser reports/index.html`` prints a page's printed length and size (and with
``--pdf``/``--screenshot`` saves them), which is how the README's page counts were measured.

Chromium and its driver come from the distribution (``apt-get install chromium chromium-driver``) and
selenium from the ``browser`` extra (``pip install -e .[browser]``). The driver path is given to selenium
explicitly, so Selenium Manager never runs and nothing is fetched at run time; ``SE_OFFLINE`` is set as a
second guard. Where either is missing, ``missing()`` says which, in a sentence a skip reason can carry.
"""
from __future__ import annotations

import base64
import os
import re
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.record.cli import USAGE_EXIT, OneLineParser

CHROMIUM_NAMES = ("chromium", "chromium-browser")
DRIVER_NAMES = ("chromedriver",)
INSTALL = "apt-get install -y chromium chromium-driver && pip install -e .[browser]"
WINDOW = (1400, 1000)  # the width the issue read the report at


def _which(names: tuple[str, ...]) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


def missing() -> str | None:
    """Why the browser cannot run here (None when it can)."""
    absent = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        absent.append("the selenium package")
    if _which(CHROMIUM_NAMES) is None:
        absent.append("a chromium binary (" + " or ".join(CHROMIUM_NAMES) + ")")
    if _which(DRIVER_NAMES) is None:
        absent.append("chromedriver")
    if not absent:
        return None
    return f"no headless browser: {', '.join(absent)} not found; install with `{INSTALL}`"


@contextmanager
def chromium(width: int = WINDOW[0], height: int = WINDOW[1]) -> Iterator["object"]:
    """A headless Chromium WebDriver with the browser console log enabled; quits on exit."""
    reason = missing()
    if reason:
        raise RuntimeError(reason)
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _which(CHROMIUM_NAMES)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--hide-scrollbars", "--disable-extensions"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=_which(DRIVER_NAMES)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def print_pdf(driver) -> bytes:
    """The open page printed as Chrome prints it (DevTools Page.printToPDF), A4, default margins."""
    from selenium.webdriver.common.print_page_options import PrintOptions

    opts = PrintOptions()
    opts.page_width, opts.page_height = 21.0, 29.7
    return base64.b64decode(driver.print_page(opts))


def pdf_pages(pdf: bytes) -> int:
    """Pages in a PDF: its page objects ('/Type /Page', not '/Pages'); Chrome writes no object streams."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.report.browser",
                           description="Open a report in headless Chromium; print its size and printed pages.")
    parser.add_argument("page", type=Path, help="an index.html")
    parser.add_argument("--pdf", type=Path, default=None, help="also save the printed PDF here")
    parser.add_argument("--screenshot", type=Path, default=None, help="also save a screenshot of the top of the page")
    parser.add_argument("--expand", action="store_true", help="open every collapsed <details> block before printing")
    args = parser.parse_args(argv)
    if not args.page.is_file():
        print(f"error: {args.page} not found", file=sys.stderr)
        return USAGE_EXIT
    reason = missing()
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return USAGE_EXIT
    with chromium() as driver:
        driver.get(args.page.resolve().as_uri())
        if args.screenshot:
            driver.save_screenshot(str(args.screenshot))
        if args.expand:
            driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
        pdf = print_pdf(driver)
    if args.pdf:
        args.pdf.write_bytes(pdf)
    print(f"{args.page}: {args.page.stat().st_size / 1e6:.2f} MB of HTML, {pdf_pages(pdf)} printed pages (A4)"
          f"{' with every block expanded' if args.expand else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
