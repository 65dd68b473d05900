"""`trapline explain -p SPEC [--strategy S] -- PROGRAM ARGS` (trapline/explain/probe.py): the
site, every strategy's answer in auto's order, the bytes before and after, the generated code
and the first hit step by step, for a sample on both arches and a libc function of the host's
/bin/ls; bad input is one line and exit 2."""
import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from trapline.explain import explain
from trapline.explain.document import schema
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e


SAMPLES_BIN = Path(__file__).resolve().parents[3] / "samples" / "bin"


def _explain(*args):
    return CliRunner().invoke(explain, list(args))


def _doc(*args):
    result = _explain("--format", "json", *args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    jsonschema.Draft202012Validator(schema()).validate(doc)
    return doc


def _items(doc, n):
    return doc["sections"][n]["items"]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_auto_is_explained_and_the_hit_is_followed(arch):
    fib = str(SAMPLES_BIN / arch / "fib")
    doc = _doc("-p", "uprobe:fib:fib", "--", fib, "5")
    assert doc["facts"]["strategy"] == "jump" and doc["facts"]["hits"] == 15
    answers = [i["text"] for i in _items(doc, 1)]
    assert answers[0].startswith("jump") and "CHOSEN" in answers[0]
    assert all("would accept" in a or "refuses:" in a for a in answers[1:])
    [patched] = [i for i in _items(doc, 2) if i["kind"] == "bytes"]
    assert patched["before"].startswith("55") and patched["after"].startswith("e9")
    steps = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert steps[0]["asm"].startswith("jmp") and steps[-1]["last"]
    assert any(s["asm"] == "int3" and s["where"] == "tool code" for s in steps)
    # text and JSON from the same run are the same document; a second run the same bytes
    text = _explain("-p", "uprobe:fib:fib", "--", fib, "5").output
    assert text == _explain("-p", "uprobe:fib:fib", "--", fib, "5").output
    assert "1. the site" in text and "CHOSEN" in text


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy,listing", [("trampoline", True), ("emulate", False)])
@alternates("arch")
def test_a_named_strategy_shows_its_own_code_or_none(arch, strategy, listing):
    doc = _doc("-p", "uprobe:fib:fib", "--strategy", strategy, "--",
               str(SAMPLES_BIN / arch / "fib"), "5")
    assert doc["facts"]["strategy"] == strategy
    [patched] = [i for i in _items(doc, 2) if i["kind"] == "bytes"]
    assert patched["after"] == "cc"
    code = _items(doc, 3)
    assert (code[0]["kind"] == "insn") == listing
    steps = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert steps[0]["asm"] == "int3" and steps[-1]["last"]
    if strategy == "emulate":          # push %ebp/%rbp emulated: the stack pointer moved
        assert len(steps) == 2 and steps[0]["changes"][0]["name"] in ("esp", "rsp")


def test_a_libc_function_of_the_hosts_ls():
    doc = _doc("-p", "uprobe:libc.so.6:opendir", "--", "/bin/ls", "/")
    site = _items(doc, 0)[0]
    assert site["kind"] == "insn" and "libc.so.6" in site["note"]
    assert doc["facts"]["hits"] >= 1 and doc["facts"]["exit_status"] == 0
    steps = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert steps[0]["where"] == "libc.so.6:opendir"


def test_an_ifunc_is_explained_at_the_implementation_its_resolver_chose():
    """glibc's strlen is an IFUNC: the probe is placed when the resolver has returned, at the
    implementation, and the explanation is of that site (it failed before: nothing was placed
    when the library was mapped)."""
    doc = _doc("-p", "uprobe:libc.so.6:strlen", "--", "/bin/ls", "/")
    texts = [i["text"] for i in _items(doc, 0) if i["kind"] == "text"]
    assert any(t.startswith("strlen is an IFUNC") for t in texts)
    assert doc["facts"]["hits"] >= 1
    steps = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert steps and steps[0]["address"] == doc["facts"]["address"]


@pytest.mark.parametrize("args,line", [
    (["-p", "uprobe:ls:parse_args", "--", "/bin/ls", "/"],    # stripped: only main is found
     "trapline: uprobe:ls:parse_args: no function 'parse_args' in /usr/bin/ls"),
    (["-p", "uprobe:libc.so.6:opendir+1", "--", "/bin/ls", "/"],
     "trapline: uprobe:libc.so.6:opendir+1: not an instruction boundary"),
    (["-p", "uprobe:nothere:f", "--", "FIB", "1"],
     "trapline: uprobe:nothere:f: matches no object the program mapped"),
    (["-p", "uprobe:fib:fib", "--max-insns", "50", "--", "FIB", "5"],
     "trapline: uprobe:fib:fib: placed at 0x"),
    (["-p", "uprobe:fib:__aio_close", "--", "FIB", "5"],      # musl's, never called by fib
     "trapline: uprobe:fib:__aio_close: placed at 0x"),
    (["-p", "uprobe:fib:fib+0xc", "--strategy", "jump", "--", "FIB", "5"],
     "trapline: uprobe:fib:fib+0xc: --strategy jump refuses the site: 0x"),
    (["-p", "uretprobe:fib:fib", "--", "FIB", "5"],
     "trapline: explain -p uretprobe:fib:fib: explains a uprobe"),
    (["-p", "uprobe:fib:fib"], "trapline: explain -p: no program given"),
    (["-p", "uprobe:fib:fib", "--technique", "jump", "--", "FIB", "5"],
     "trapline: explain: --technique and -p are two different questions"),
])
def test_bad_input_is_one_line_and_status_2(args, line):
    args = [str(SAMPLES_BIN / "x86_64" / "fib") if a == "FIB" else a for a in args]
    result = _explain(*args)
    assert result.exit_code == 2
    lines = result.output.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith(line), lines
    if "placed at" in line:
        assert "but never reached " in lines[0]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_hit_that_leaves_by_a_relocated_call_ends_at_the_callee(arch):
    """fib+0x16 covers `mov edi, eax; call fib` on both arches: the relocated call pushes the
    original return address and jumps to fib, where the hit is over (the step-through ran on
    into the recursive call's own hit before, and showed it as the same hit)."""
    doc = _doc("-p", "uprobe:fib:fib+0x16", "--", str(SAMPLES_BIN / arch / "fib"), "3")
    steps = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert steps[-2]["asm"].startswith("jmp") and steps[-1]["last"]
    assert steps[-1]["where"] == "fib"
    assert [s["address"] for s in steps].count(doc["facts"]["address"]) == 1


@pytest.mark.parametrize("arch,site", [("i386", "fib+3"), ("x86_64", "fib+4")])
def test_an_emulated_push_shows_the_stack_word_it_wrote(arch, site):
    """The int3's step of an emulated push (push edi / push r14): the stack pointer one word
    down and the word there written by the handler (steps showed registers only before)."""
    doc = _doc("-p", f"uprobe:fib:{site}", "--strategy", "emulate", "--",
               str(SAMPLES_BIN / arch / "fib"), "3")
    [first, last] = [i for i in _items(doc, 4) if i["kind"] == "step"]
    assert first["asm"] == "int3" and last["last"]
    sp = {c["name"]: c for c in first["changes"]}["esp" if arch == "i386" else "rsp"]
    word = 4 if arch == "i386" else 8
    assert sp["after"] == sp["before"] - word
    assert f"[{sp['after']:#x}]" in {c["name"] for c in first["changes"]}
