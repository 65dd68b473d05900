"""Frameless system calls (kernel_model/cpu/traps.py): an `int 0x80` from ring 3 through the kernel's
DPL-3 gate runs without a trap frame. The property: a call made from any register state ends
in the same state (registers, flags, the memory it wrote, output, exit status) whether it went
the frameless path or the full one (frame on the kernel stack, handler, IRET); and the frameless
path steps aside when its preconditions do not hold."""
import io
import struct
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel_model.cpu import idt as V
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.cpu.traps import TrapDispatcher
from tests.unit.kernel_model.userland import USER_CODE, user_program
from tests.unit.loader import elf_builder

from .. import tinyelf
from ..tinyelf import tiny_elf, write_program

BUF = "buf"        # an argument that points at a scratch buffer in the data segment
# i386 numbers: read, write, time, getpid, getuid, kill, brk, getppid, uname, sched_yield,
# nanosleep (blocks, then restarts), waitpid (ECHILD), and one the kernel lacks (ENOSYS).
CALLS = (3, 4, 13, 20, 24, 37, 45, 64, 122, 158, 162, 7, 9999)
# Signals kill() may send: every one but those that would stop the process for good.
SIGNALS = [s for s in range(32) if s not in (19, 20, 21, 22)]
# CF PF AF ZF SF DF OF (TF would single-step; IF and IOPL are not the program's to set)
FLAG_BITS = (0x1, 0x4, 0x10, 0x40, 0x80, 0x400, 0x800)

word = st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 64), st.just(BUF))
calls = st.fixed_dictionaries({
    "nr": st.sampled_from(CALLS),
    "args": st.lists(word, min_size=6, max_size=6),      # ebx ecx edx esi edi ebp
    "flags": st.lists(st.sampled_from(FLAG_BITS), unique=True).map(sum),
    "buffer": st.tuples(st.integers(0, 1), st.integers(0, 2_000_000)),   # e.g. a timespec
}).map(lambda c: {**c, "args": _tame_kill(c)})


def _tame_kill(call) -> list:
    """kill(0, sig) with a signal that ends the process or not, never one that stops it."""
    args = list(call["args"])
    if call["nr"] == 37:
        args[0] = 0
        args[1] = SIGNALS[args[1] % len(SIGNALS)] if isinstance(args[1], int) else 10
    return args


# The program: copy the scratch buffer's first 8
# bytes from the data, load every register and the flags from the data, make the call with
# `int 0x80` on a stack that ends where the buffer starts, push the flags and registers, and
# write them and the buffer to stdout in one write; exit(0).
SOURCE = {
    "i386": "mov esi, DATA_ADDR; mov edi, {buf}; push 2; pop ecx; "
            "rep movs dword ptr es:[edi], dword ptr [esi]; "
            "mov esp, esi; popad; popfd; mov esp, {buf}; int 0x80; "
            "pushfd; pushad; mov ecx, esp; mov edx, 100; push 1; pop ebx; push 4; pop eax; "
            "int 0x80; xor ebx, ebx; push 1; pop eax; int 0x80",
    "x86_64": "mov esi, DATA_ADDR; mov edi, {buf}; push 2; pop rcx; "
              "rep movs dword ptr [rdi], dword ptr [rsi]; "
              "mov rsp, rsi; pop rbx; pop rcx; pop rdx; pop rsi; pop rdi; pop rbp; pop rax; "
              "popfq; mov esp, {buf}; int 0x80; "
              "pushfq; push rax; push rbx; push rcx; push rdx; push rsi; push rdi; push rbp; "
              "push r8; push r9; push r10; push r11; mov rsi, rsp; mov edx, 160; "
              "push 1; pop rdi; push 1; pop rax; syscall; xor edi, edi; push 60; pop rax; syscall",
}


def _elf(arch: str, call) -> bytes:
    bits = 32 if arch == "i386" else 64
    buf = elf_builder.build_elf(bits).data_vaddr + 0x800     # the data page: RW
    args = [buf if a == BUF else a & ((1 << bits) - 1) for a in call["args"]]
    flags = call["flags"] | 2
    data = struct.pack("<II", *call["buffer"])
    if bits == 32:
        ebx, ecx, edx, esi, edi, ebp = args
        data += struct.pack("<9I", edi, esi, ebp, 0, ebx, edx, ecx, call["nr"], flags)
    else:
        data += struct.pack("<8Q", *args, call["nr"], flags)
    # The builder's code area holds 80 bytes; this program and its data need more.
    room = bytes(0x200)
    with mock.patch.object(elf_builder, "CODE", room), mock.patch.object(tinyelf, "CODE", room):
        return tiny_elf(arch, SOURCE[arch].format(buf=buf), data)


def _run(path, monkeypatch, *, frameless: bool):
    monkeypatch.setattr(TrapDispatcher, "frameless_calls", frameless)
    full_calls = []
    dispatch = TrapDispatcher.dispatch

    def counting(self, vector, pc, **kw):
        if vector == V.SYSCALL_VECTOR:
            full_calls.append(pc)
        return dispatch(self, vector, pc, **kw)
    monkeypatch.setattr(TrapDispatcher, "dispatch", counting)
    stdout, stderr = CapturedOutput(name=b"pipe:[1]"), CapturedOutput(name=b"pipe:[2]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(b"input"), stdout=stdout, stderr=stderr,
                                 report=io.StringIO()))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"prog"], []))
    return (status, stdout.data, stderr.data, dict(kernel.unimplemented)), len(full_calls)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=calls)
def test_frameless_and_full_paths_end_in_the_same_state(tmp_path, monkeypatch, arch, call):
    path = write_program(tmp_path, f"prog-{arch}", _elf(arch, call))
    frameless, full_dispatches = _run(path, monkeypatch, frameless=True)
    framed, _ = _run(path, monkeypatch, frameless=False)
    assert frameless == framed
    # Only the calls taken outside the hook (exit) went through the IDT on the fast run.
    assert full_dispatches <= 1


def test_frameless_handler_runs_without_a_frame_while_its_gate_stands(arch):
    prog = user_program(arch, "mov eax, 20; int 0x80; mov eax, 20; int 0x80")
    taken = []
    prog.space.idt.set_gate(V.SYSCALL_VECTOR, lambda frame: taken.append(frame.ip) or False, dpl=3)
    prog.space.traps.set_frameless_handler(V.SYSCALL_VECTOR,
                                           lambda frame: taken.append(frame) or True)
    exit_ = prog.machine.run(prog.machine.pc)
    assert taken == [None, None] and exit_.pc == USER_CODE + 14
    # A tool that puts its own handler on the vector gets every call, with a frame.
    taken.clear()
    prog.space.idt.set_gate(V.SYSCALL_VECTOR, lambda frame: taken.append(frame.ip) or False, dpl=3)
    exit_ = prog.machine.run(USER_CODE)
    assert taken == [USER_CODE + 7] and exit_.vector == V.SYSCALL_VECTOR


def test_the_frameless_path_needs_a_user_callable_gate(arch="i386"):
    prog = user_program(arch, "mov eax, 20; int 0x80")
    prog.space.idt.set_gate(V.SYSCALL_VECTOR, lambda frame: True, dpl=0)
    with pytest.raises(Exception, match="user-callable"):
        prog.space.traps.set_frameless_handler(V.SYSCALL_VECTOR, lambda frame: True)


def test_a_debug_watcher_sends_calls_through_the_full_path(tmp_path, monkeypatch, arch):
    """A watcher may change registers at a call's entry or exit, which IRET restores from the
    frame: with one, every int 0x80 gets its frame."""
    source = "mov eax, 20; int 0x80; mov eax, 20; int 0x80; xor ebx, ebx; mov eax, 1; int 0x80"
    path = write_program(tmp_path, f"prog-{arch}", tiny_elf(arch, source))

    class Watcher:
        def syscall_entry(self, *a):
            pass

        def syscall_exit(self, *a):
            pass
    init = Kernel.__init__

    def with_watcher(self, config):
        init(self, config)
        self.debug.syscall_watchers.append(Watcher())
    monkeypatch.setattr(Kernel, "__init__", with_watcher)
    _, full_dispatches = _run(path, monkeypatch, frameless=True)
    assert full_dispatches == 4     # both getpids, and exit twice: declined in the hook, then taken
