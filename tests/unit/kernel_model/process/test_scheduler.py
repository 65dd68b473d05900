"""The scheduler and blocking through whole tiny programs: sleeping on a pipe, the deadlock
report (never a hang), the instruction budget, and virtual sleeps."""
import io
import struct

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Deadlock, InstructionBudgetExceeded, Kernel, KernelConfig

from ..tinyelf import tiny_elf, write_program

# pipe(fds) then read(fds[0], buf, 1): the write end stays open in the same process, so the
# read can never complete.
PIPE_THEN_READ = {          # the fds and the buffer live on the (writable) stack
    "i386": "sub esp, 16; mov eax, 42; mov ebx, esp; int 0x80; "
            "mov eax, 3; mov ebx, [esp]; lea ecx, [esp + 8]; mov edx, 1; int 0x80; "
            "mov ebx, eax; mov eax, 1; int 0x80",
    "x86_64": "sub rsp, 16; mov eax, 22; mov rdi, rsp; syscall; "
              "mov eax, 0; mov edi, [rsp]; lea rsi, [rsp + 8]; mov edx, 1; syscall; "
              "mov edi, eax; mov eax, 60; syscall",
}
SPIN = {"i386": "spin: jmp spin", "x86_64": "spin: jmp spin"}
# nanosleep({5, 0}) then exit(0)
SLEEP = {
    "i386": "mov eax, 162; mov ebx, DATA_ADDR; xor ecx, ecx; int 0x80; mov ebx, eax; mov eax, 1; int 0x80",
    "x86_64": "mov eax, 35; mov rdi, DATA_ADDR; xor esi, esi; syscall; mov edi, eax; mov eax, 60; syscall",
}


def kernel_for(tmp_path, arch, source, data=b"", **config):
    path = write_program(tmp_path, f"prog-{arch}", tiny_elf(arch, source, data))
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO(), **config))
    return kernel, kernel.spawn(str(path).encode(), [b"prog"], [])


def test_a_read_that_can_never_complete_is_reported_as_a_deadlock(tmp_path, arch):
    kernel, proc = kernel_for(tmp_path, arch, PIPE_THEN_READ[arch])
    with pytest.raises(Deadlock) as info:
        kernel.run(proc)
    text = str(info.value)
    assert f"pid {proc.pid} tid {proc.pid}" in text
    assert "read on pipe:[" in text and "sleeping" in text


def test_instruction_budget_stops_a_spinning_guest(tmp_path, arch):
    kernel, proc = kernel_for(tmp_path, arch, SPIN[arch], max_insns=50_000)
    with pytest.raises(InstructionBudgetExceeded, match="50000"):
        kernel.run(proc)


def test_sleep_passes_virtual_time_only(tmp_path, arch):
    word = "<ii" if arch == "i386" else "<qq"
    kernel, proc = kernel_for(tmp_path, arch, SLEEP[arch], struct.pack(word, 5, 0))
    before = kernel.clock.monotonic_ns()
    status = kernel.run(proc)
    assert status == 0
    assert kernel.clock.monotonic_ns() - before >= 5 * 10**9


# 100 sched_yield calls, then exit(0): each call ends the thread's slice.
YIELDS = {
    "i386": "mov esi, 100; again: mov eax, 158; int 0x80; dec esi; jnz again; "
            "xor ebx, ebx; mov eax, 1; int 0x80",
    "x86_64": "mov r12d, 100; again: mov eax, 24; syscall; dec r12d; jnz again; "
              "xor edi, edi; mov eax, 60; syscall",
}


def test_instruction_budget_charges_what_ran(tmp_path, arch):
    """A slice ended early (here by sched_yield) is charged the instructions it ran, not its
    whole count: exactly, the same on every run."""
    used = []
    for _ in range(2):
        kernel, proc = kernel_for(tmp_path, arch, YIELDS[arch], max_insns=1_000_000)
        assert kernel.run(proc) == 0
        used.append(kernel.insns_used)
    assert used == [404, 404]       # 1 + 100 * (mov, syscall, dec, jnz) + xor, mov, syscall
    kernel, proc = kernel_for(tmp_path, arch, YIELDS[arch], max_insns=200)
    with pytest.raises(InstructionBudgetExceeded, match="200"):
        kernel.run(proc)
