"""`trapline explain --html FILE` (trapline/explain/html.py): one self-contained page per
explanation, made from the same document: the page carries the document whole, shows every step
of a hit in a step-through, every byte change as an SVG, marks a lost hit, fetches nothing, and
is the same bytes on a second run. (Tests in a real browser come with issue 30's CI setup.)"""
import html
import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.techniques import NAMES

pytestmark = pytest.mark.e2e


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.open, self.mismatched, self.doc, self._in_doc = [], [], None, False
        self.steppers, self.figures, self.lost, self.external = [], 0, 0, []
        self.stacks = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in ("meta", "rect"):
            self.open.append(tag)
        self._in_doc = attrs.get("id") == "trapline-doc"
        if "stepper" in (attrs.get("class") or "").split():
            self.steppers.append(json.loads(attrs["data-steps"]))
        self.figures += tag == "svg" and attrs.get("class") == "bytes"
        self.stacks += tag == "svg" and attrs.get("class") == "stack"
        self.lost += attrs.get("class") == "lost"
        self.external += [v for k, v in attrs.items() if k in ("src", "href")]

    def handle_startendtag(self, tag, attrs):       # <rect .../>: opens and closes
        self.handle_starttag(tag, attrs)
        if tag not in ("meta", "rect"):
            self.open.pop()

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.mismatched.append(tag)

    def handle_data(self, data):
        if self._in_doc:
            self.doc = json.loads(data.replace("<\\/", "</"))
            self._in_doc = False


def _page(tmp_path, *args) -> tuple[str, dict]:
    target = tmp_path / "page.html"
    result = CliRunner().invoke(explain, ["--html", str(target), *args])    # options before --
    assert result.exit_code == 0, result.output
    as_json = CliRunner().invoke(explain, ["--format", "json", *args])
    return target.read_text(encoding="utf-8"), json.loads(as_json.output)


@pytest.mark.parametrize("technique", NAMES)
def test_each_page_carries_its_document_and_shows_its_steps(technique, tmp_path):
    args = ["--technique", technique, "--arch", "x86_64"]
    text, doc = _page(tmp_path, *args)
    page = _Page()
    page.feed(text)
    assert page.open == [] and page.mismatched == []
    assert page.doc == doc                                   # the same document, whole
    items = [i for s in doc["sections"] for i in s["items"]]
    assert sum(len(s) for s in page.steppers) == sum(i["kind"] == "step" for i in items)
    assert [st for s in page.steppers for st in s] == [i for i in items if i["kind"] == "step"]
    assert page.figures == sum(i["kind"] == "bytes" for i in items)
    assert page.lost == sum(i["kind"] == "event" and i["lost"] for i in items)
    emulations = sum(i["kind"] == "row" and i["of"] == "iret" for i in items)
    assert page.stacks == emulations and (emulations > 0) == (technique == "emulate")
    assert page.external == []                                # nothing is fetched
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)
    assert html.escape(doc["title"]) in text
    assert _page(tmp_path, *args)[0] == text                 # deterministic


def test_the_page_of_a_users_probe_has_its_step_through(tmp_path):
    from pathlib import Path
    fib = Path(__file__).resolve().parents[3] / "samples" / "bin" / "i386" / "fib"
    text, doc = _page(tmp_path, "-p", "uprobe:fib:fib", "--strategy", "trampoline", "--",
                      str(fib), "3")
    page = _Page()
    page.feed(text)
    [steps] = page.steppers
    assert steps[0]["asm"] == "int3" and steps[-1]["last"] and page.doc == doc
    assert text.count("<svg class=\"areas\"") == 2          # the site's area, the tool's
    assert "[uprobes]" in text
