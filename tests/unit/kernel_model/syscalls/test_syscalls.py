"""System calls from tiny guest programs through the whole kernel: `int 0x80` (i386 ABI)
and `syscall` (x86-64 ABI), results in eax/rax as -errno on failure (Linux arch/x86/entry)."""
import io

import pytest

from kernel_model import errno as E
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

from ..tinyelf import tiny_elf, write_program

UNMAPPED = 0x1000          # below every mapping (mmap_min_addr)

# write(1, buf, 2) then exit(result of write): the exit status carries the result's low byte.
I386_WRITE = ("mov eax, 4; mov ebx, 1; mov ecx, {buf}; mov edx, 2; int 0x80; "
              "mov ebx, eax; mov eax, 1; int 0x80")
X86_64_WRITE = ("mov eax, 1; mov edi, 1; mov rsi, {buf}; mov edx, 2; syscall; "
                "mov edi, eax; mov eax, 60; syscall")
WRITE = {"i386": I386_WRITE, "x86_64": X86_64_WRITE}


def run_program(tmp_path, arch, source, data=b""):
    path = write_program(tmp_path, f"prog-{arch}", tiny_elf(arch, source, data))
    stdout, stderr = CapturedOutput(name=b"pipe:[1]"), CapturedOutput(name=b"pipe:[2]")
    report = io.StringIO()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=stderr, report=report))
    proc = kernel.spawn(str(path).encode(), [b"prog"], [])
    status = kernel.run(proc)
    return status, stdout.data, kernel


def exit_code(status: int) -> int:
    assert status & 0x7F == 0, f"killed by signal {status & 0x7F}"
    return status >> 8


def test_write_reaches_captured_stdout(tmp_path, arch):
    status, out, _ = run_program(tmp_path, arch, WRITE[arch].format(buf="DATA_ADDR"), b"hi")
    assert out == b"hi"
    assert exit_code(status) == 2                    # write returned 2


def test_bad_pointer_gives_efault(tmp_path, arch):
    status, out, _ = run_program(tmp_path, arch, WRITE[arch].format(buf=hex(UNMAPPED)))
    assert out == b""
    assert exit_code(status) == -E.EFAULT & 0xFF


@pytest.mark.parametrize("abi_source", [
    "mov eax, 9999; int 0x80; mov ebx, eax; mov eax, 1; int 0x80",
])
def test_unknown_number_gives_enosys_through_int80(tmp_path, arch, abi_source):
    """int 0x80 uses the i386 table in both arches (IA32 emulation on x86-64)."""
    status, _, kernel = run_program(tmp_path, arch, abi_source)
    assert exit_code(status) == -E.ENOSYS & 0xFF
    assert 9999 in kernel.unimplemented.values()


def test_unknown_number_gives_enosys_through_syscall(tmp_path):
    status, _, kernel = run_program(
        tmp_path, "x86_64", "mov eax, 9999; syscall; mov edi, eax; mov eax, 60; syscall")
    assert exit_code(status) == -E.ENOSYS & 0xFF
    assert 9999 in kernel.unimplemented.values()


def test_int80_from_64bit_code_uses_the_i386_abi(tmp_path):
    status, out, _ = run_program(tmp_path, "x86_64", I386_WRITE.format(buf="DATA_ADDR"), b"hi")
    assert out == b"hi" and exit_code(status) == 2


def test_syscall_preserves_the_return_address_in_rcx_and_flags_in_r11(tmp_path):
    """SYSCALL puts the next RIP in rcx and RFLAGS in r11 (Intel SDM Vol. 2B); the kernel
    returns there, so code after the call runs with rcx pointing right after it."""
    source = ("mov eax, 39; syscall; after: lea rdx, [rip]; sub rdx, rcx; "
              "mov edi, edx; mov eax, 60; syscall")
    status, _, _ = run_program(tmp_path, "x86_64", source)
    # rdx = address of `sub` (lea rdx,[rip] is 7 bytes); rcx = address of `after`
    assert exit_code(status) == 7
