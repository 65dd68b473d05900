"""`trapline run` imports only what a run needs (issues 12 and 31: a run starts at once).

How long it takes is a benchmark's business (bench/startup.py); what it imports is checked here:
a plain run of a static hello loads no probe strategy (not even their registry), no gdb stub, no
profiler, no strace decoder, no disassembler or assembler and no pyelftools (an exec reads the
ELF and program headers with struct; symbols are read only when a tool asks for them), not
hashlib, which loads OpenSSL (kernel_model/digest.py), and none of the door's parts that only a
tool asks for (not even the tracing facility, which the run loop asked at every pick of a
thread whether a tracer held it stopped; nor the socket classes one of them names), nor System V IPC's tables, nor the
kernel's tables a hello never uses (keys, AF_UNIX names, shared file pages, a POSIX timer, the
UTS names, /proc/config.gz), a signal frame's layouts, /proc (until a path goes through it) or
the other ABI's syscall numbers. Started as the `trapline` command (trapline/entry.py), a plain
run loads no click either, nor trapline.cli (trapline/plain_run.py); a run with an option is
click's to parse.
"""
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"
NOT_FOR_A_RUN = ("lief", "capstone", "keystone", "elftools", "rich", "instrumenter", "hashlib", "_hashlib",
                 "trapline.strace", "trapline.gdbserver", "trapline.cli.gdbserver", "trapline.cli.trace",
                 "trapline.profile", "trapline.cli.profile", "trapline.tracing", "trapline.trace_formats",
                 "trapline.explain", "trapline.experiments", "trapline.probespec",
                 # the profiling timer and the C hooks behind it: a plain run arms no timer
                 "kernel_model.time.timer", "kernel_model.time.timer_capture", "emu.block_clock",
                 "emu.tick_capture", "emu.native",
                 # the door's parts no tool asked for (kernel_model/debug/facade.py makes a part when
                 # first asked), and the sockets the descriptors part names
                 "kernel_model.debug.descriptors", "kernel_model.debug.patches", "kernel_model.debug.traps",
                 "kernel_model.debug.run", "kernel_model.debug.watch", "kernel_model.debug.detach",
                 "kernel_model.debug.threads", "kernel_model.debug.tracing.syscall_stops",
                 "kernel_model.debug.tracing.facility",
                 # ptrace's notion, made when a tool ptraces (kernel_model/debug/ptrace_links.py)
                 "kernel_model.debug.ptrace_links", "kernel_model.ptraced",
                 "kernel_model.signals.traced_calls",
                 "kernel_model.net.inet", "kernel_model.net.unix",
                 # System V IPC's kinds, made when first used (kernel_model/ipc/namespace.py)
                 "kernel_model.ipc.msg", "kernel_model.ipc.sem", "kernel_model.ipc.shm",
                 # the kernel's tables a hello never uses, made when first used (kernel.py):
                 # keys, AF_UNIX names, shared file pages; a POSIX timer (time/posix_timer.py)
                 "kernel_model.keys", "kernel_model.net.names", "kernel_model.net.address",
                 "kernel_model.memory.page_cache", "kernel_model.time.posix_timer",
                 # the UTS names (uname) and /proc/config.gz's text with gzip (kernel.py)
                 "kernel_model.syscalls.impls.utsname", "kernel_model.kconfig", "gzip",
                 # a signal frame's layouts, read when a frame is built or read (signals/delivery.py)
                 "kernel_model.signals.frame", "kernel_model.signals.fpframe",
                 # /proc, mounted on the first lookup under it (fs/filesystem.py)
                 "kernel_model.fs.procfs", "kernel_model.fs.procsys")
# Each ABI's syscall number table (kernel_model/syscalls/numbers.py): a static hello calls
# through its own only, and the other's is not imported.
ABI_TABLE = {"x86_64": "kernel_model.syscalls.numbers_x86_64", "i386": "kernel_model.syscalls.numbers_i386"}

SCRIPT = """
import sys
from trapline.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    status = e.code
heavy = sorted({m for m in sys.modules for p in PREFIXES if m == p or m.startswith(p + ".")})
print(status, " ".join(heavy) or "-", file=sys.stderr)
"""


# The `trapline` command itself (console script, `python -m trapline`): entry.run reads sys.argv.
COMMAND_SCRIPT = """
import sys
from trapline.entry import run
try:
    run()
except SystemExit as e:
    status = e.code
heavy = sorted({m for m in sys.modules for p in PREFIXES if m == p or m.startswith(p + ".")})
print(status, " ".join(heavy) or "-", file=sys.stderr)
"""
NOT_FOR_A_PLAIN_RUN = (*NOT_FOR_A_RUN, "click", "trapline.cli")


def _modules_after(*args: str, script: str = SCRIPT, prefixes: tuple = NOT_FOR_A_RUN) -> tuple[str, list[str]]:
    code = f"PREFIXES = {prefixes!r}\n" + script
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    status, heavy = done.stderr.strip().splitlines()[-1].split(" ", 1)
    return status, [] if heavy == "-" else heavy.split()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_run_imports_no_tool_and_no_heavy_library(arch):
    status, heavy = _modules_after("run", "--", str(SAMPLES / arch / "hello"))
    assert status == "0" and heavy == []


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_run_imports_only_its_own_abi_table(arch):
    status, loaded = _modules_after("run", "--", str(SAMPLES / arch / "hello"), script=COMMAND_SCRIPT,
                                    prefixes=tuple(ABI_TABLE.values()))
    assert status == "0" and loaded == [ABI_TABLE[arch]]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("dashes", [["--"], []], ids=["dashes", "bare"])
def test_the_command_runs_a_plain_run_without_click(arch, dashes):
    status, heavy = _modules_after("run", *dashes, str(SAMPLES / arch / "hello"), script=COMMAND_SCRIPT,
                                   prefixes=NOT_FOR_A_PLAIN_RUN)
    assert status == "0" and heavy == []


def test_the_command_leaves_a_run_with_options_to_click():
    status, heavy = _modules_after("run", "--seed", "1", "--", str(SAMPLES / "x86_64" / "hello"),
                                   script=COMMAND_SCRIPT, prefixes=NOT_FOR_A_PLAIN_RUN)
    assert status == "0" and {"click", "trapline.cli"} <= set(heavy)


def test_trace_still_loads_what_it_needs():
    status, heavy = _modules_after("trace", "-p", "proc:exit", "--", str(SAMPLES / "x86_64" / "hello"))
    assert status == "0"
    assert {"trapline.cli.trace", "instrumenter.strategies.registry", "trapline.probespec"} <= set(heavy)


@pytest.mark.parametrize("command, module", [("explain", "trapline.explain"),
                                             ("experiment", "trapline.experiments"),
                                             ("gdbserver", "trapline.cli.gdbserver"),
                                             ("profile", "trapline.cli.profile")])
def test_other_commands_are_still_found(command, module):
    status, heavy = _modules_after(command, "--help")
    assert status == "0" and module in heavy
