"""The older techniques' rows (trapline/explain/rows.py): every row kind the table declares is in
the shipped schema as declared there, any row built with its fields is a valid document item that
round-trips through JSON, renders as one line of text and as a table on the page; a row with a
field missing, or a field of the wrong type, is refused."""
import json

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trapline.explain import document as d
from trapline.explain import rows as r
from trapline.explain.html import render_html

VALIDATOR = jsonschema.Draft202012Validator(d.schema())
line = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20)
address = st.integers(0, 2**64 - 1)
VALUES = {
    id(r.I): st.integers(0, 2**20), id(r.S): line, id(r.B): st.booleans(),
    id(r.ADDR): address, id(r.WORD): address, id(r.HEX): st.binary(max_size=15).map(bytes.hex),
    id(r.N_I): st.one_of(st.none(), address), id(r.N_S): st.one_of(st.none(), line),
    id(r.ADDRS): st.lists(address, max_size=3), id(r.NAMES): st.lists(line, max_size=3),
    id(r.AREAS): st.lists(st.builds(r.area, line, address, address), max_size=3),
}


def _row_of(name):
    fields = {field: VALUES[id(kind)] for field, kind in r.ROWS[name].fields.items()}
    return st.fixed_dictionaries(fields).map(lambda values: r.row(name, **values))


rows = st.sampled_from(sorted(r.ROWS)).flatmap(_row_of)


def test_the_shipped_schema_declares_every_row_kind_as_rows_py_does():
    shipped = d.schema()["$defs"]
    for name, definition in r.schema_defs().items():
        assert shipped[name] == definition, name
    assert "row" in shipped["item"]["properties"]["kind"]["enum"]


@given(st.lists(rows, min_size=1, max_size=8))
def test_any_row_is_a_valid_item_of_one_line(items):
    doc = d.document("emulate", "i386", "t", [d.section(None, items)])
    VALIDATOR.validate(doc)
    assert json.loads(d.render_json(doc)) == doc
    assert d.render_text(doc).count("\n") == 1 + len(items)
    page = render_html(doc)
    assert page.count("<table class=\"rows\"") == 1 + sum(
        a["of"] != b["of"] for a, b in zip(items, items[1:]))


def test_a_row_needs_exactly_its_fields():
    with pytest.raises(ValueError, match="row page: fields"):
        r.row("page", address=0x1000)
    with pytest.raises(ValueError):
        r.row("page", address=0x1000, size=3, extra=1)


def test_the_schema_refuses_a_row_with_a_field_of_the_wrong_type():
    good = r.row("table", original=0x10, relocated=0x20, back=0x10, exact=True)
    doc = d.document("relocate", "i386", "t", [d.section(None, [good])])
    assert VALIDATOR.is_valid(doc)
    for field, value in (("original", "0x10"), ("exact", 1), ("relocated", -1)):
        bad = json.loads(json.dumps(doc))
        bad["sections"][0]["items"][0]["fields"][field] = value
        assert not VALIDATOR.is_valid(bad), field
    unknown = json.loads(json.dumps(doc))
    unknown["sections"][0]["items"][0]["of"] = "poem"
    assert not VALIDATOR.is_valid(unknown)


def test_a_row_is_laid_out_as_the_technique_printed_it():
    moved = r.row("thread-moved", tid=100, tool=0xff0000, original=0x10027e0, symbol="fib",
                  how="exact")
    assert r.row_line(moved) == ("   tid 100: PC 0xff0000 (fib's trampoline) -> 0x10027e0 <fib> "
                                 "[exact: the original instruction has not run yet]")
