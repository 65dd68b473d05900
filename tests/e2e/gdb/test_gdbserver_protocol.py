"""Conformance of `trapline gdbserver` with the GDB remote serial protocol, driven by a
scripted client (tests/e2e/gdb_client.py) on both arches: the handshake and acks, the target
description against the `g` reply's length, threads, memory shown under a probe's int3,
breakpoints, a step through a probed instruction, Ctrl-C, exit, kill and detach."""
import struct
import time
import xml.etree.ElementTree as ET

import pytest

from loader.auxv import AT_ENTRY
from tests.e2e.gdb_client import REPO, ScriptedGdb

ARCHES = ("x86_64", "i386")
PID = 100
PTID = f"p{PID:x}.{PID:x}"


def sample(arch, name):
    return REPO / "samples" / "bin" / arch / name


def image(arch, name="fib"):
    from loader.elf import load_elf
    path = sample(arch, name)
    return load_elf(path.read_bytes(), str(path))


def symbol(arch, name):
    return image(arch).symbols.lookup(name).addr


def registers(description: bytes):
    root = ET.fromstring(description)
    regs = [(r.get("name"), int(r.get("bitsize")), int(r.get("regnum")))
            for r in root.iter("reg")]
    return root, regs


def pc_number(regs, arch):
    return next(n for name, _, n in regs if name == ("rip" if arch == "x86_64" else "eip"))


def read_pc(gdb, regs, arch) -> int:
    return int.from_bytes(bytes.fromhex(gdb.ask(f"p{pc_number(regs, arch):x}".encode()).decode()), "little")


@pytest.fixture
def started():
    sessions = []

    def start(arch, program="fib", args=("3",), **kwargs):
        gdb = ScriptedGdb(sample(arch, program), args, **kwargs)
        sessions.append(gdb)
        return gdb
    yield start
    for gdb in sessions:
        if gdb.proc.poll() is None:
            gdb.proc.kill()
            gdb.proc.wait()


@pytest.mark.parametrize("arch", ARCHES)
def test_handshake_description_and_g_length(started, arch):
    gdb = started(arch)
    gdb.write(b"+")
    features = gdb.ask(b"qSupported:multiprocess+;swbreak+;xmlRegisters=i386").decode().split(";")
    for wanted in ("swbreak+", "multiprocess+", "qXfer:features:read+", "qXfer:auxv:read+",
                   "qXfer:exec-file:read+", "vContSupported+", "QStartNoAckMode+"):
        assert wanted in features
    assert any(f.startswith("PacketSize=") for f in features)
    assert gdb.ask(b"vMustReplyEmpty") == b""
    gdb.no_ack()
    root, regs = registers(gdb.xfer("features", "target.xml"))
    assert root.findtext("architecture") == ("i386:x86-64" if arch == "x86_64" else "i386")
    assert [n for _, _, n in regs] == list(range(len(regs)))
    names = [name for name, _, _ in regs]
    orig = "orig_rax" if arch == "x86_64" else "orig_eax"
    assert {"st0", "fctrl", "fop", "xmm7", "mxcsr", orig} <= set(names)
    if arch == "x86_64":
        assert {"fs_base", "gs_base", "r15", "xmm15"} <= set(names)
    g = gdb.ask(b"g")
    assert len(g) == 2 * sum(bits // 8 for _, bits, _ in regs)     # a too-long g is a stub bug
    assert gdb.ask(b"?") == f"T05thread:{PTID};".encode()
    assert gdb.ask(b"qfThreadInfo") == f"m{PTID}".encode()
    assert gdb.ask(b"qsThreadInfo") == b"l"
    assert gdb.ask(b"qC") == f"QC{PTID}".encode()
    assert gdb.ask(b"qAttached") == b"0"
    assert gdb.ask(f"Hg{PTID}".encode()) == b"OK"
    assert gdb.ask(b"Hgp99.99") == b"E01"
    assert gdb.xfer("exec-file", f"{PID:x}").endswith(f"bin/{arch}/fib".encode())
    auxv = gdb.xfer("auxv", "")
    word = 8 if arch == "x86_64" else 4
    pairs = dict(struct.iter_unpack("<QQ" if word == 8 else "<II", auxv))
    assert pairs[AT_ENTRY] == image(arch).entry
    assert gdb.ask(b"m0,4") == b"E0e"                  # nothing mapped at 0
    assert gdb.ask(b"vCont?") == b"vCont;c;C;s;S"
    assert gdb.ask(b"qUnknownThing") == b""
    assert gdb.ask(b"vKill;64") == b"OK"
    assert gdb.close()[0] == 137                     # 128 + SIGKILL


@pytest.mark.parametrize("arch", ARCHES)
def test_breakpoint_on_a_probed_function_shows_the_original_bytes_and_steps_one_insn(started, arch):
    gdb = started(arch, probes=["uprobe:fib:fib"], strategy="trampoline")
    gdb.write(b"+")
    gdb.ask(b"qSupported:multiprocess+")
    gdb.no_ack()
    _, regs = registers(gdb.xfer("features", "target.xml"))
    fib = symbol(arch, "fib")
    original = gdb.ask(f"m{fib:x},1".encode())
    assert original == b"55"                          # push %rbp/%ebp, not the probe's int3 (cc)
    assert gdb.ask(f"Z0,{fib:x},1".encode()) == b"OK"
    assert gdb.ask(b"vCont;c") == f"T05thread:{PTID};swbreak:;".encode()
    assert read_pc(gdb, regs, arch) == fib
    assert gdb.ask(f"vCont;s:{PTID};c".encode()) == f"T05thread:{PTID};".encode()
    assert read_pc(gdb, regs, arch) == fib + 1        # one original instruction: push
    assert gdb.ask(f"z0,{fib:x},1".encode()) == b"OK"
    assert gdb.ask(b"vCont;c") == f"W00;process:{PID:x}".encode()
    status, err = gdb.close()
    assert status == 0
    assert err.count("uprobe:fib:fib") == 5            # fib(3): 2*F(4)-1 calls, all recorded


def test_ctrl_c_stops_the_running_guest_then_kill(started):
    gdb = started("x86_64", args=("40",))             # ~10^9 instructions: still running at 0x03
    gdb.write(b"+")
    gdb.ask(b"qSupported:multiprocess+")
    gdb.no_ack()
    gdb.send(b"vCont;c")
    time.sleep(1.0)
    gdb.write(b"\x03")
    assert gdb.reply().startswith(f"T02thread:{PTID};".encode())   # SIGINT, as gdbserver says
    assert gdb.ask(b"vKill;64") == b"OK"
    assert gdb.close()[0] == 137


@pytest.mark.parametrize("arch", ARCHES)
def test_detach_removes_the_breakpoints_and_the_program_finishes(started, arch):
    gdb = started(arch, args=("5",), probes=["uprobe:fib:fib"])
    gdb.write(b"+")
    gdb.ask(b"qSupported:multiprocess+")
    gdb.no_ack()
    fib = symbol(arch, "fib")
    assert gdb.ask(f"Z0,{fib:x},1".encode()) == b"OK"
    assert gdb.ask(b"vCont;c").startswith(b"T05")
    assert gdb.ask(b"D") == b"OK"
    status, err = gdb.close()
    assert status == 0
    assert "fib(5) = 5" in err                        # --stdio: the guest's stdout is stderr
    assert err.count("uprobe:fib:fib") == 15          # the probes stay: 2*F(6)-1 calls
