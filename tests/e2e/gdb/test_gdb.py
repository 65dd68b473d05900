"""Debian's gdb debugs probed programs through `trapline gdbserver` (US 6,957,421),
on both arches: breakpoints on probed functions, the original prologue under the probes'
int3s and jumps, stepi over a probed and an emulated instruction, registers, bt, finish,
threads, Ctrl-C, kill and detach; the probe records are those of the run without gdb."""
import re
import subprocess
import sys
import time

import pytest

from tests.e2e.gdb_batch import REPO, gdb_batch, sample
from tests.quick_profile import alternates

ARCHES = ("x86_64", "i386")
PROLOGUE = {"x86_64": ("push   %rbp", "mov    %rsp,%rbp", 4),      # (1st, 2nd insn, its end)
            "i386": ("push   %ebp", "mov    %esp,%ebp", 3)}
PC = {"x86_64": "rip", "i386": "eip"}


def fib_address(arch: str) -> int:
    from loader.elf import load_elf
    path = sample(arch, "fib")
    with open(path, "rb") as f:
        return load_elf(f.read(), path).symbols.lookup("fib").addr


def pcs(text: str) -> list[int]:
    return [int(m, 16) for m in re.findall(r"^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", text, re.M)]


@pytest.mark.parametrize("strategy", ["trampoline", "emulate", "jump"])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_break_on_a_probed_function_shows_the_original_prologue_and_steps_it(arch, strategy):
    fib = fib_address(arch)
    first, second, end = PROLOGUE[arch]
    out = gdb_batch(sample(arch, "fib"), [
        "break *fib", "continue", "x/3i $pc", "stepi", "p $pc", "stepi", "p $pc",
        "info registers " + PC[arch], "bt", "kill"],
        args=("4",), probes=["uprobe:fib:fib"], strategy=strategy)
    assert f"Breakpoint 1, 0x{fib:0{8 if arch == 'i386' else 16}x} in fib ()" in out
    listing = out[out.index("=> "):]
    assert first in listing.splitlines()[0] and second in listing.splitlines()[1]
    assert "int3" not in out and "jmp" not in listing.split("\n$")[0]
    assert pcs(out) == [fib + 1, fib + end]     # one ORIGINAL instruction per stepi
    assert re.search(rf"^{PC[arch]}\s+0x{fib + end:x}\s+0x{fib + end:x} <fib\+{end}>", out, re.M)
    assert re.search(r"#1  0x[0-9a-f]+ in main \(\)", out)
    assert "[Inferior 1 (process 100) killed]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_finish_and_the_probe_records_equal_the_run_without_gdb(arch, tmp_path):
    with_gdb, without = tmp_path / "gdb.txt", tmp_path / "plain.txt"
    out = gdb_batch(sample(arch, "fib"), [
        "break *fib", "continue", "continue", "stepi", "delete", "finish", "p $pc", "finish",
        "p $pc", "continue"],
        args=("5",), probes=["uprobe:fib:fib"], strategy="trampoline", records=with_gdb)
    back = pcs(out)                                    # finish: into fib(5), then into main
    assert re.search(rf"\$1 = \(void \(\*\)\(\)\) 0x{back[0]:x} <fib\+\d+>", out)
    assert re.search(rf"\$2 = \(void \(\*\)\(\)\) 0x{back[1]:x} <main\+\d+>", out)
    assert "fib(5) = 5" in out
    assert "[Inferior 1 (process 100) exited normally]" in out
    subprocess.run([sys.executable, "-m", "trapline", "trace", "-p", "uprobe:fib:fib",
                    "--strategy", "trampoline", "-o", str(without), "--", sample(arch, "fib"), "5"],
                   check=True, cwd=REPO, capture_output=True)
    records = with_gdb.read_text().splitlines()
    assert len(records) == 15                          # 2*F(6)-1 calls of fib
    assert records == without.read_text().splitlines()  # timestamps included


@pytest.mark.parametrize("arch", ARCHES)
def test_threads(arch):
    out = gdb_batch(sample(arch, "threads"), [
        "break worker", "continue", "info threads", "thread 2", "bt", "thread 1", "bt",
        "delete", "continue"])
    assert re.search(r"Thread 2 \"threads\" hit Breakpoint 1, 0x[0-9a-f]+ in worker \(\)", out)
    assert len(re.findall(r"^[* ] \d+\s+Thread 100\.\d+ ", out, re.M)) >= 2
    assert "[Switching to thread 2 (Thread 100.101)]" in out
    thread2 = out[out.index("[Switching to thread 2"):]
    assert re.search(r"#1  0x[0-9a-f]+ in (thread_main|start) \(\)", thread2)   # i386: a tail call
    assert re.search(r"in __clone \(\)", thread2)
    assert "threads: ok" in out and "exited normally" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_ctrl_c_then_kill(arch):
    out = gdb_batch(sample(arch, "fib"), ["break main", "continue", "delete", "echo RUNNING\\n",
                                          "continue", "bt 1", "kill"], args=("40",),
                    interrupt_at="RUNNING")
    assert "Program received signal SIGINT, Interrupt." in out
    assert re.search(r"#0  0x[0-9a-f]+ in fib \(\)", out)
    assert "[Inferior 1 (process 100) killed]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_detach_leaves_the_probed_program_running_to_its_end(arch, tmp_path):
    records = tmp_path / "records.txt"
    out = gdb_batch(sample(arch, "fib"), ["break *fib", "continue", "detach"], args=("6",),
                    probes=["uprobe:fib:fib"], records=records)
    assert "[Inferior 1 (process 100) detached]" in out
    # The program runs on after gdb has gone (its output went to gdb's pipe, as a detached
    # gdbserver inferior's does); its probes stay in place: all 2*F(7)-1 calls are recorded.
    for _ in range(600):
        if len(records.read_text().splitlines()) == 25:
            break
        time.sleep(0.1)
    assert len(records.read_text().splitlines()) == 25


@pytest.mark.parametrize("arch", ARCHES)
def test_bt_and_finish_through_uretprobe_landings_show_the_programs_frames(arch):
    """With a uretprobe on fib every pending fib call's return slot holds the probe's landing
    (an int3 in the XOL page); gdb reads the return address it stands for there, so bt lists
    fib's own callers down to main (it stopped at the landing before: `?? ()`, a corrupt
    stack), and finish returns into fib. The probes still record every return."""
    out = gdb_batch(sample(arch, "fib"), [
        "break *fib", "continue", "continue", "continue", "bt", "delete", "finish", "p $pc",
        "continue"],
        args=("5",), probes=["uprobe:fib:fib", "uretprobe:fib:fib"], strategy="trampoline")
    frames = re.findall(r"^#(\d+)\s+0x[0-9a-f]+ in (\S+) \(\)", out, re.M)
    assert [name for _, name in frames] == ["fib", "fib", "fib", "main"]
    assert "?? ()" not in out and "corrupt stack" not in out
    assert re.search(r"\$1 = \(void \(\*\)\(\)\) 0x[0-9a-f]+ <fib\+\d+>", out)
    assert "fib(5) = 5" in out
