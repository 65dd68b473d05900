"""A real headless Chromium for the explain pages' tests (test_explain_browser.py): Debian's
chromium and chromium-driver (.ci/run installs them, or the first test: host_tools.py), driven by selenium through the driver's
own path, so that Selenium Manager never looks for (or downloads) a driver of its own.

Missing pieces fail the test with what to install: a browser test that skipped where Chromium
is absent would pass on every machine that cannot run it."""
from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e.debian_bins import DebianBinsError
from tests.e2e.host_tools import ensure_chromium

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# No first-run pages, no background fetches, no updates: a page that fetched anything would
# show it in the resource timing the tests read, not in the browser's own traffic.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1200,900")


def require_browser() -> None:
    try:
        ensure_chromium()                   # installs Debian's packages where apt can
    except DebianBinsError as error:
        pytest.fail(f"the browser tests need Debian's Chromium: {error} "
                    "(apt-get install chromium chromium-driver, as .ci/run does)", pytrace=False)
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("the browser tests need selenium (pip install -e '.[test]')", pytrace=False)


def start_browser():
    """(driver, its profile folder): a fresh --user-data-dir per browser."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix="trapline-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    return driver, profile


def stop_browser(driver, profile: str) -> None:
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver) -> list[str]:
    """The console's messages of level SEVERE since the last call (script errors among them)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def distinct_colours(png: bytes) -> int:
    """How many colours a screenshot holds (a blank page has one)."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return len(image.getcolors(maxcolors=1 << 24))
