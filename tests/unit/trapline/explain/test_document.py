"""The explain document (trapline/explain/document.py): every document its constructors can build
is valid against the shipped schema, survives a JSON round trip unchanged, and its text has one
line per item plus the headings — the text is the document laid out, nothing more, nothing less."""
import json

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from trapline.explain import document as d
from trapline.explain.steps import step

VALIDATOR = jsonschema.Draft202012Validator(d.schema())
line = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)   # no newline
address = st.integers(0, 2**64 - 1)
raw = st.binary(max_size=15)
word = st.integers(0, 2**64 - 1)
changes = st.lists(st.tuples(st.sampled_from(["rax", "rsp", "counter"]), word, word), max_size=3)
items = st.one_of(
    st.builds(d.text, line),
    st.builds(d.insn, address, raw, line, line),
    st.builds(d.patch, address, raw, raw, line),
    st.builds(d.event, st.integers(0, 2**40), st.one_of(st.none(), st.integers(1, 2**15)), line,
              site=st.one_of(st.none(), raw), lost=st.booleans()),
    st.builds(d.register, line, word, word, line),
    st.builds(d.area, address, address, st.sampled_from(["r-x", "rw-", "rwx", "---"]), line, line),
    st.builds(step, st.integers(1, 500), st.integers(1, 2**15), address, raw, line, line, changes,
              last=st.booleans()),
)
sections = st.lists(st.builds(d.section, st.one_of(st.none(), line), st.lists(items, max_size=6)),
                    max_size=4)
documents = st.builds(d.document, st.sampled_from(["jump", "probe", "walkup"]),
                      st.sampled_from(["i386", "x86_64"]), line, sections)


@given(documents)
def test_every_document_is_valid_round_trips_and_renders_one_line_per_item(doc):
    VALIDATOR.validate(doc)
    assert json.loads(d.render_json(doc)) == doc
    titled = sum(1 for s in doc["sections"] if s["title"] is not None)
    count = sum(len(s["items"]) for s in doc["sections"])
    text = d.render_text(doc)
    assert text.endswith("\n") and text.count("\n") == 1 + titled + count


def test_the_older_techniques_lines_come_back_unchanged():
    lines = ["=== i386: the first ===", "a line", "", "=== i386: a second banner ===", "  indented"]
    doc = d.from_lines("emulate", "i386", lines)
    VALIDATOR.validate(doc)
    assert d.render_text(doc) == "\n".join(lines) + "\n"


def test_a_lost_event_and_a_last_step_say_so():
    lost = d._item_line(d.event(7, 101, "runs the original", site=b"\x55", lost=True))
    assert lost == "t=7         tid 101: runs the original  [site: 55]   <== LOST: no probe saw this execution"
    last = d._item_line(step(3, 100, 0x10, b"\x53", "push rbx", "fib+0x6", [], last=True))
    assert last.endswith("(back in the original code: the hit is over)")
