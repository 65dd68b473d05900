"""The `trapline explain --html` pages in a real browser (Debian's headless Chromium, browser.py):
every technique's page on both arches and an `explain -p` page load from a file with nothing
fetched and no console error, show a non-blank screenshot and carry their JSON document; each
step-through, moved with its buttons and with the arrow keys, shows at every step what the
document's step holds (the instruction, where it is, what it changed) and marks its row."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.techniques import NAMES

from .browser import console_errors, distinct_colours, start_browser, stop_browser
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

SAMPLES_BIN = Path(__file__).resolve().parents[3] / "samples" / "bin"
ARCHES = ("i386", "x86_64")
# Pages whose document has a step-through (the others have none: the test says so below).
STEPPED = ("jump", "handler")


@pytest.fixture(scope="module")
def browser():
    driver, profile = start_browser()
    yield driver
    stop_browser(driver, profile)


def _page(tmp_path, *args) -> tuple[Path, dict]:
    target = tmp_path / "page.html"
    made = CliRunner().invoke(explain, ["--html", str(target), *args])
    assert made.exit_code == 0, made.output
    as_json = CliRunner().invoke(explain, ["--format", "json", *args])
    assert as_json.exit_code == 0, as_json.output
    return target, json.loads(as_json.output)


def _load(browser, target: Path) -> None:
    console_errors(browser)                              # drop what an earlier page left
    browser.get(target.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"


def _hex(value: int) -> str:
    return f"{value:#x}"


def _expected_where(step: dict, count: int) -> str:
    where = f" <{step['where']}>" if step["where"] else ""
    return (f"step {step['n']} of {count}  tid {step['tid']}  {_hex(step['address'])}{where}: "
            f"{step['asm']}")


def _expected_board(step: dict) -> list[str]:
    if not step["changes"]:
        return ["back in the original code: the hit is over" if step["last"]
                else "no register changed"]
    out = ["changed"]
    for change in step["changes"]:
        out += [change["name"], _hex(change["before"]), "-> " + _hex(change["after"])]
        if change["name"] in ("eflags", "rflags"):
            out.append(_flags(change["before"], change["after"]))
    return out


FLAGS = (("CF", 0), ("PF", 2), ("AF", 4), ("ZF", 6), ("SF", 7), ("TF", 8), ("IF", 9), ("DF", 10),
         ("OF", 11))


def _flags(before: int, after: int) -> str:
    """The flags that changed, as the page names them: ZF=1 (Intel SDM vol. 1 3.4.3)."""
    return " ".join(f"{name}={after >> bit & 1}" for name, bit in FLAGS
                    if before >> bit & 1 != after >> bit & 1)


SHOWN = """
var el = arguments[0];
return {current: +el.getAttribute('data-current'),
        where: el.querySelector('.where').textContent,
        board: Array.from(el.querySelectorAll('svg.board text')).map(function(t){return t.textContent;}),
        marked: Array.from(el.querySelectorAll('tr.step')).map(function(tr){return tr.classList.contains('current');})};
"""


def _assert_shows(browser, stepper, steps: list[dict], k: int) -> None:
    shown = browser.execute_script(SHOWN, stepper)
    assert shown["current"] == k
    assert shown["where"] == _expected_where(steps[k], len(steps))
    assert shown["board"] == _expected_board(steps[k])
    assert shown["marked"] == [i == k for i in range(len(steps))]


def _steppers(browser, doc: dict) -> list[tuple[object, list[dict]]]:
    """Each step-through element with its steps as the document has them, in page order."""
    elements = browser.find_elements("css selector", ".stepper")
    runs, run = [], []
    for section in doc["sections"]:
        for item in section["items"] + [{"kind": None}]:
            if item["kind"] == "step":
                run.append(item)
            elif run:
                runs.append(run)
                run = []
    assert len(elements) == len(runs)
    return list(zip(elements, runs))


def _page_is_whole(browser, doc: dict) -> None:
    assert console_errors(browser) == []
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    carried = browser.execute_script(
        "return JSON.parse(document.getElementById('trapline-doc').textContent)")
    assert carried == doc
    assert browser.find_element("css selector", "h1").text == doc["title"]
    sizes = browser.execute_script("return Array.from(document.querySelectorAll('svg.bytes, "
                                   "svg.areas')).map(function(s){var r=s.getBoundingClientRect();"
                                   "return r.width*r.height;})")
    assert all(size > 0 for size in sizes)
    assert distinct_colours(browser.get_screenshot_as_png()) > 8


def _step_through_with_buttons(browser, stepper, steps: list[dict]) -> None:
    _assert_shows(browser, stepper, steps, 0)
    previous, following = (stepper.find_element("css selector", c) for c in (".prev", ".next"))
    previous.click()                                     # already at the first: stays
    _assert_shows(browser, stepper, steps, 0)
    for k in range(1, len(steps)):
        following.click()
        _assert_shows(browser, stepper, steps, k)
    following.click()                                    # at the last: stays
    _assert_shows(browser, stepper, steps, len(steps) - 1)
    for k in range(len(steps) - 2, -1, -1):
        previous.click()
        _assert_shows(browser, stepper, steps, k)


def _step_with_keys(browser, stepper, steps: list[dict]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    browser.execute_script("arguments[0].focus()", stepper)
    presses = min(3, len(steps) - 1)
    for k in range(1, presses + 1):
        ActionChains(browser).send_keys(Keys.ARROW_RIGHT).perform()
        _assert_shows(browser, stepper, steps, k)
    ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()
    _assert_shows(browser, stepper, steps, presses - 1)
    for _ in range(presses + 2):                         # past the first: stays there
        ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()
    _assert_shows(browser, stepper, steps, 0)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("technique", NAMES)
@alternates("arch")
def test_each_techniques_page_works_in_chromium(browser, technique, arch, tmp_path):
    target, doc = _page(tmp_path, "--technique", technique, "--arch", arch)
    _load(browser, target)
    _page_is_whole(browser, doc)
    steppers = _steppers(browser, doc)
    assert bool(steppers) == (technique in STEPPED)      # the stepped pages are stepped here
    for stepper, steps in steppers:
        _step_through_with_buttons(browser, stepper, steps)
        _step_with_keys(browser, stepper, steps)
    assert console_errors(browser) == []


@pytest.mark.parametrize("arch", ARCHES)
def test_a_users_probe_page_steps_through_its_hit(browser, arch, tmp_path):
    target, doc = _page(tmp_path, "-p", "uprobe:fib:fib", "--strategy", "trampoline", "--",
                        str(SAMPLES_BIN / arch / "fib"), "3")
    _load(browser, target)
    _page_is_whole(browser, doc)
    [(stepper, steps)] = _steppers(browser, doc)
    assert steps[0]["asm"] == "int3" and steps[-1]["last"] and len(steps) > 3
    _step_through_with_buttons(browser, stepper, steps)
    _step_with_keys(browser, stepper, steps)
    assert console_errors(browser) == []
