"""strace -k (trapline/strace_stacks.py): the stack of each call, from the profiler's unwinder,
as Debian's strace -k prints it: ` > object(function+0xoff) [0xfile offset]`.

On amd64 every call's block is strace's, line for line, arch_prctl's included: it runs in
musl's __set_thread_area, hand-written with neither CFI nor a frame pointer, where the
profiler's unwinder stops and -k goes on with libdw's frame-pointer guess. Debian's x86-64
strace cannot unwind an i386 process; there the blocks must reach the program's _start.
"""
import subprocess
import sys

import pytest

from tests.e2e.sandbox_runner import REPO_ROOT
from tests.e2e.host_tools import ensure_strace

pytestmark = pytest.mark.e2e


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """(call name, its ` > ` lines) for each call of a -k trace."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(" > "):
            blocks[-1][1].append(line)
        elif "(" in line and not line.startswith(("+++", "---")):
            blocks.append((line.split("(")[0], []))
    return blocks


def _trapline(program: str, tmp_path) -> str:
    out = tmp_path / "trapline.txt"
    subprocess.run([sys.executable, "-m", "trapline", "run", "-k", "-o", str(out), "--", program],
                   check=True, capture_output=True, cwd=REPO_ROOT, timeout=120)
    return out.read_text()


def test_amd64_blocks_are_straces(tmp_path):
    program = str(REPO_ROOT / "samples" / "bin" / "x86_64" / "callchain")
    native = tmp_path / "strace.txt"
    subprocess.run([ensure_strace(), "-k", "-o", str(native), program], check=True, capture_output=True,
                   timeout=60)
    ours, theirs = _blocks(_trapline(program, tmp_path)), _blocks(native.read_text())
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    assert ours == theirs
    assert dict(theirs)["arch_prctl"][0].startswith(f" > {program}(__set_thread_area+")


def test_i386_blocks_reach_the_start(tmp_path):
    program = str(REPO_ROOT / "samples" / "bin" / "i386" / "callchain")
    blocks = dict(_blocks(_trapline(program, tmp_path)))
    assert blocks["set_thread_area"][0].startswith(f" > {program}(__set_thread_area+")
    assert blocks["set_thread_area"][-1].startswith(f" > {program}(_start+")
    assert blocks["set_tid_address"][0].startswith(f" > {program}(__init_tp+")
    assert blocks["set_tid_address"][-1].startswith(f" > {program}(_start+")
    assert blocks["writev"][-1].startswith(f" > {program}(_start+")
