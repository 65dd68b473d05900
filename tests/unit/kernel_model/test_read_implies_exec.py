"""READ_IMPLIES_EXEC as Linux makes it effective (kernel_model/personality.py).

`probe` asks personality(0xffffffff), turns READ_IMPLIES_EXEC on, runs code from a page it
mapped PROT_READ|PROT_WRITE, forks a child that does the same in a page of its own (the child
inherits the personality), and execs `after`, a program with PT_GNU_STACK (RW) that reports the
personality it starts with: a 64-bit exec clears the flag, an i386 exec keeps it. An i386
program without PT_GNU_STACK starts with the flag (elf_read_implies_exec) and an executable
stack; without the flag a PROT_READ|PROT_WRITE page is not executable. Where the host runs x86
binaries the same files run natively and must give the same results.
"""
import platform
import struct
import subprocess

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.personality import READ_IMPLIES_EXEC
from loader.program_headers import PT_GNU_STACK
from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import PF_R, PF_W, build_elf

from .tinyelf import write_program

RET_42 = "0xc30000002ab8"                # mov eax, 42; ret  (little-endian qword)
SYS = {
    "x86_64": dict(personality=135, mmap=9, fork=57, wait4=61, execve=59, write=1, exit=60),
    "i386": dict(personality=136, mmap=192, fork=2, wait4=114, execve=11, write=4, exit=1),
}
X86_64 = dict(
    call="mov eax, {personality}; mov edi, {arg}; syscall;",
    mmap_rw="mov eax, {mmap}; xor edi, edi; mov esi, 4096; mov edx, 3; mov r10d, 0x22; "
            "mov r8, -1; xor r9d, r9d; syscall; mov rbx, rax;",
    run_page="mov rax, " + RET_42 + "; mov qword ptr [rbx], rax; call rbx;",
    fork="mov eax, {fork}; syscall; test eax, eax; jnz parent;",
    child_exit="mov edi, eax; mov eax, {exit}; syscall;",
    wait="parent: mov edi, eax; mov esi, {d}+16; xor edx, edx; xor r10d, r10d; mov eax, {wait4}; syscall;",
    write="mov eax, {write}; mov edi, 1; mov esi, {d}; mov edx, {n}; syscall;",
    execve="mov rdi, qword ptr [rsp+16]; mov qword ptr [{d}+64], rdi; mov qword ptr [{d}+72], 0; "
           "mov esi, {d}+64; mov edx, {d}+72; mov eax, {execve}; syscall;",
    exit="mov eax, {exit}; xor edi, edi; syscall;",
    stack_code="mov rax, " + RET_42 + "; push rax; call rsp; mov edi, eax; mov eax, {exit}; syscall;",
)
I386 = dict(
    call="mov eax, {personality}; mov ebx, {arg}; int 0x80;",
    mmap_rw="mov eax, {mmap}; xor ebx, ebx; mov ecx, 4096; mov edx, 3; mov esi, 0x22; "
            "mov edi, -1; xor ebp, ebp; int 0x80; mov ebx, eax;",
    run_page="mov dword ptr [ebx], 0x2ab8; mov dword ptr [ebx+4], 0xc300; call ebx;",
    fork="mov eax, {fork}; int 0x80; test eax, eax; jnz parent;",
    child_exit="mov ebx, eax; mov eax, {exit}; int 0x80;",
    wait="parent: mov ebx, eax; mov ecx, {d}+16; xor edx, edx; xor esi, esi; mov eax, {wait4}; int 0x80;",
    write="mov eax, {write}; mov ebx, 1; mov ecx, {d}; mov edx, {n}; int 0x80;",
    execve="mov ebx, dword ptr [esp+8]; mov dword ptr [{d}+64], ebx; mov dword ptr [{d}+68], 0; "
           "mov ecx, {d}+64; mov edx, {d}+68; mov eax, {execve}; int 0x80;",
    exit="mov eax, {exit}; xor ebx, ebx; int 0x80;",
    stack_code="push 0xc300; push 0x2ab8; call esp; mov ebx, eax; mov eax, {exit}; int 0x80;",
)


def _program(arch: str, body: list[str], *, gnu_stack: bool = False) -> bytes:
    built = build_elf(32 if arch == "i386" else 64)
    parts = X86_64 if arch == "x86_64" else I386
    d = built.data_vaddr
    source = ""
    for step in body:
        name, _, arg = step.partition(":")
        fields = dict(SYS[arch], d=d, arg=arg or 0, n=arg or 0)
        source += parts[name].format(**fields)
    built.set_code(asm(source, arch, built.entry))
    if gnu_stack:                   # PT_PHDR becomes PT_GNU_STACK, RW: "no executable stack"
        built.set_phdr(built.phdr_index, "type", PT_GNU_STACK)
        built.set_phdr(built.phdr_index, "flags", PF_R | PF_W)
    return built.bytes()


def _store(slot: int) -> str:
    """`call` left its result in eax: keep it in the output slot."""
    return f"store:{slot}"


X86_64["store"] = "mov dword ptr [{d}+{arg}], eax;"
I386["store"] = "mov dword ptr [{d}+{arg}], eax;"
# brk(0), brk(+4096), then run code from the new heap page and exit with what it returns
I386["brk_run"] = ("mov eax, 45; xor ebx, ebx; int 0x80; mov esi, eax; lea ebx, [eax+4096]; "
                   "mov eax, 45; int 0x80; mov dword ptr [esi], 0x2ab8; mov dword ptr [esi+4], 0xc300; "
                   "call esi; mov ebx, eax; mov eax, 1; int 0x80;")

PROBE = ["call:0xffffffff", _store(0), f"call:{READ_IMPLIES_EXEC}", _store(4), "call:0xffffffff", _store(8),
         "mmap_rw", "run_page", _store(12),
         "fork", "mmap_rw", "run_page", "child_exit", "wait",
         "write:20", "execve", "exit"]
AFTER = ["call:0xffffffff", _store(0), "write:4", "exit"]


def _run(path, *args) -> tuple[int, bytes]:
    out = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=out, stderr=CapturedOutput()))
    proc = kernel.spawn(str(path).encode(), [str(path).encode(), *(str(a).encode() for a in args)], [])
    return kernel.run(proc), out.data


def _native(path, *args):
    if platform.machine() != "x86_64":
        return None
    try:
        return subprocess.run([str(path), *map(str, args)], capture_output=True, timeout=10)
    except OSError:                 # a host kernel without IA-32 emulation
        return None


def test_personality_fork_and_exec(tmp_path, arch):
    probe = write_program(tmp_path, f"probe-{arch}", _program(arch, PROBE))
    after = write_program(tmp_path, f"after-{arch}", _program(arch, AFTER, gnu_stack=True))
    status, out = _run(probe, after)
    start = READ_IMPLIES_EXEC if arch == "i386" else 0        # i386 without PT_GNU_STACK
    kept = READ_IMPLIES_EXEC if arch == "i386" else 0         # what an exec keeps
    assert status == 0
    assert struct.unpack("<5I", out[:20]) == (start, start, READ_IMPLIES_EXEC, 42, 42 << 8)
    assert struct.unpack("<I", out[20:]) == (kept,)
    host = _native(probe, after)
    if host is not None:
        assert (host.returncode, host.stdout) == (0, out)


def test_stack_is_executable_only_for_an_i386_program_without_pt_gnu_stack(tmp_path, arch):
    path = write_program(tmp_path, f"stack-{arch}", _program(arch, ["stack_code"]))
    status, _ = _run(path)
    expected = 42 << 8 if arch == "i386" else 11                # else SIGSEGV
    assert status == expected
    host = _native(path)
    if host is not None:
        assert host.returncode == (42 if arch == "i386" else -11)


def test_without_the_flag_a_read_write_page_does_not_run(tmp_path, arch):
    path = write_program(tmp_path, f"noexec-{arch}", _program(arch, ["call:0", "mmap_rw", "run_page", "exit"]))
    status, _ = _run(path)
    assert status == 11                                         # SIGSEGV
    host = _native(path)
    if host is not None:
        assert host.returncode == -11


@pytest.mark.parametrize("gnu_stack", [False, True])
def test_heap_follows_the_personality(tmp_path, gnu_stack):
    """i386: brk's new pages are executable exactly when the program runs with the flag."""
    path = write_program(tmp_path, f"brk-{gnu_stack}", _program("i386", ["brk_run"], gnu_stack=gnu_stack))
    status, _ = _run(path)
    assert status == (11 if gnu_stack else 42 << 8)
    host = _native(path)
    if host is not None:
        assert host.returncode == (-11 if gnu_stack else 42)
