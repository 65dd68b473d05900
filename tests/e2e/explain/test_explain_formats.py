"""Every technique of `trapline explain` (trapline/explain/techniques.py) on both arches: the
JSON document is valid against the shipped schema, the text is rendered from that same
document, and a second run gives the same bytes in both formats."""
import json

import jsonschema
import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.document import render_text, schema
from trapline.explain.techniques import NAMES
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e


def _run(*args) -> str:
    result = CliRunner().invoke(explain, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("technique", NAMES)
@alternates("arch")
def test_json_is_valid_the_text_is_its_rendering_and_both_are_deterministic(technique, arch):
    as_json = _run("--technique", technique, "--arch", arch, "--format", "json")
    doc = json.loads(as_json)
    jsonschema.Draft202012Validator(schema()).validate(doc)
    assert doc["technique"] == technique and doc["arch"] == arch
    assert sum(len(s["items"]) for s in doc["sections"]) > 3
    text = _run("--technique", technique, "--arch", arch)
    assert text == render_text(doc)
    assert _run("--technique", technique, "--arch", arch, "--format", "json") == as_json
    assert _run("--technique", technique, "--arch", arch) == text


def test_the_schema_refuses_what_it_does_not_describe():
    """The schema says something: an item of no known kind, or a step without its changes,
    is refused."""
    validator = jsonschema.Draft202012Validator(schema())
    good = {"format": "trapline-explain", "version": 1, "technique": "jump", "arch": "i386",
            "title": "t", "facts": {}, "sections": [{"title": None, "items": [
                {"kind": "text", "text": "x"}]}]}
    assert validator.is_valid(good)
    bad_kind = json.loads(json.dumps(good))
    bad_kind["sections"][0]["items"][0] = {"kind": "poem", "text": "x"}
    bad_hex = json.loads(json.dumps(good))
    bad_hex["sections"][0]["items"][0] = {"kind": "bytes", "address": 1, "before": "xyz",
                                          "after": "cc", "note": ""}
    assert not validator.is_valid(bad_kind) and not validator.is_valid(bad_hex)


def test_an_unknown_technique_is_one_line_and_status_2():
    result = CliRunner().invoke(explain, ["--technique", "teleport"])
    assert result.exit_code == 2
    lines = result.output.strip().split("\n")
    assert lines == ["trapline: explain: unknown technique 'teleport' (have: "
                     + ", ".join(NAMES) + ")"]


@pytest.mark.parametrize("technique,facts", [
    ("trampoline", {"output": "fib(10) = 5", "hits": 15}),
    ("relocate", {"output": "fib(5) = 5", "hits": {"uprobe:fib:fib": 15, "uprobe:fib:fib+1": 15}}),
    ("detach", {"output": "fib(8) = 21", "entries": 6, "returns": 0, "threads_moved": 1,
                "return_pointers_reset": 6}),
])
def test_the_older_techniques_json_has_the_runs_figures(technique, facts):
    doc = json.loads(_run("--technique", technique, "--arch", "i386", "--format", "json"))
    assert {k: doc["facts"][k] for k in facts} == facts and doc["facts"]["exit_status"] == 0


def test_emulate_json_lists_the_instructions_emulated_per_example():
    doc = json.loads(_run("--technique", "emulate", "--arch", "x86_64", "--form", "lock",
                          "--mode", "user", "--format", "json"))
    assert doc["facts"]["form"] == "lock"
    [user] = doc["facts"]["emulated"]
    assert user["example"].endswith("as user code (CPL 3)")
    assert user["instructions"] == ["push rbp", "pop rbp", "ret"]


def _rows(doc, of):
    return [i["fields"] for s in doc["sections"] for i in s["items"]
            if i["kind"] == "row" and i["of"] == of]


OLDER = ("emulate", "trampoline", "relocate", "detach")


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("technique", OLDER)
@alternates("arch")
def test_the_older_techniques_facts_are_fields_not_text(technique, arch):
    """Their JSON was their printed lines as text items; now every address, value and byte of
    theirs is a row's field (what is left as text is prose: no address in it)."""
    doc = json.loads(_run("--technique", technique, "--arch", arch, "--format", "json"))
    texts = [i["text"] for s in doc["sections"] for i in s["items"] if i["kind"] == "text"]
    assert not [t for t in texts if "0x" in t]
    assert sum(i["kind"] == "row" for s in doc["sections"] for i in s["items"]) > 5


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_emulate_rows_show_push_storing_the_frame_pointer_below_the_stack_pointer(arch):
    doc = json.loads(_run("--technique", "emulate", "--arch", arch, "--mode", "kernel",
                          "--format", "json"))
    trap, state = _rows(doc, "trap")[0], _rows(doc, "trap-state")[0]
    assert trap["asm"] in ("push ebp", "push rbp") and state["cpl"] == 0
    items = [i for s in doc["sections"] for i in s["items"] if i["kind"] == "row"]
    second = [n for n, i in enumerate(items) if i["of"] == "trap"][1]
    words = {i["fields"]["address"]: i["fields"] for i in items[:second] if i["of"] == "stack-word"}
    pushed = words[state["sp_before"] - words[state["sp_before"]]["word"]]
    assert pushed["after"] == state["bp_before"] and pushed["after_is"].endswith("pushed")


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_trampoline_rows_show_the_replaced_instruction_copied_into_the_page(arch):
    doc = json.loads(_run("--technique", "trampoline", "--arch", arch, "--format", "json"))
    [patch] = _rows(doc, "int3-patch")
    [redirect] = _rows(doc, "redirect")
    assert patch["after"] == "cc" and redirect["saved"] == patch["address"] + 1
    items = [i for s in doc["sections"] for i in s["items"] if i["kind"] == "row"]
    blocks = [n for n, i in enumerate(items) if i["of"] == "block"]
    copy = next(n for n in blocks if items[n]["fields"]["name"] == "OriginalInstruction_Copy")
    assert items[copy + 1]["fields"]["bytes"] == patch["before"]
    assert _rows(doc, "page-insn")[0]["address"] == redirect["to"] == _rows(doc, "page")[0]["address"]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_relocate_and_detach_rows_agree_with_their_runs(arch):
    relocated = json.loads(_run("--technique", "relocate", "--arch", arch, "--format", "json"))
    [fn] = _rows(relocated, "relocated")
    for pair in _rows(relocated, "table"):
        assert pair["back"] == pair["original"] and pair["exact"]
        assert fn["copy_start"] <= pair["relocated"] < fn["copy_end"]
    assert all(fn["start"] <= c["original"] < fn["end"]
               for c in _rows(relocated, "copy-insn") if c["original"] is not None)
    detached = json.loads(_run("--technique", "detach", "--arch", arch, "--format", "json"))
    facts = detached["facts"]
    assert len(_rows(detached, "thread-moved")) == facts["threads_moved"]
    assert len(_rows(detached, "return-reset")) == facts["return_pointers_reset"]
    [unmapped] = _rows(detached, "unmapped")
    [uprobes] = [a for a in unmapped["areas"] if a["name"] == "[uprobes]"]
    assert all(uprobes["start"] <= r["tool"] < uprobes["end"] and r["original"] != r["tool"]
               for r in _rows(detached, "return-reset"))         # out of the tool's area
    assert unmapped["left"] == []
