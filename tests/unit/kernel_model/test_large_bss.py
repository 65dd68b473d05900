"""A 2 GiB .bss, as Fortran and HPC programs have: Linux maps it lazily and runs the program.

The program below writes a marker into four pages of its bss far apart (first page, 1 GiB in,
the last page, and one in the middle), reads each back with a word that was never written
(zero) and writes the eight words to stdout. Under trapline the mapping must cost the host only
the pages touched; a segment that the address space cannot hold is refused with the reason.
Where the host runs x86 binaries the same file runs natively and the bytes must match.
"""
import subprocess

import pytest

from kernel_model.errors import KernelError
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import CODE_OFFSET, DATA_OFFSET, build_elf

from .tinyelf import write_program

BSS = 2 << 30
OFFSETS = (0x100, 1 << 30, (BSS >> 1) + 0x12340, BSS - 8)     # bytes from the data segment


def big_bss_program(arch: str, memsz: int = BSS) -> bytes:
    built = build_elf(32 if arch == "i386" else 64)
    d = built.data_vaddr
    out = d + 0x40                      # 8 words of output inside the file-backed page
    r = "rbx" if arch == "x86_64" else "ebx"     # a register: x86-64 sign-extends a disp32
    stores = "".join(f"mov {r}, {d + off:#x}; mov dword ptr [{r}], {0x51 + i};"
                     for i, off in enumerate(OFFSETS))
    loads = "".join(f"mov {r}, {d + off:#x}; mov eax, dword ptr [{r}]; mov dword ptr [{out + 8 * i:#x}], eax;"
                    f"mov eax, dword ptr [{r} - 4]; mov dword ptr [{out + 8 * i + 4:#x}], eax;"
                    for i, off in enumerate(OFFSETS))
    if arch == "x86_64":
        tail = (f"mov eax, 1; mov edi, 1; mov esi, {out:#x}; mov edx, 32; syscall;"
                "mov eax, 60; xor edi, edi; syscall;")
    else:
        tail = (f"mov eax, 4; mov ebx, 1; mov ecx, {out:#x}; mov edx, 32; int 0x80;"
                "mov eax, 1; xor ebx, ebx; int 0x80;")
    code = asm(stores + loads + tail, arch, built.entry)
    assert CODE_OFFSET + len(code) <= DATA_OFFSET
    text = built.load_indexes[0]
    built.set_phdr(text, "filesz", CODE_OFFSET + len(code))
    built.set_phdr(text, "memsz", CODE_OFFSET + len(code))
    built.data[CODE_OFFSET:CODE_OFFSET + len(code)] = code
    built.set_phdr(built.load_indexes[1], "memsz", memsz)
    return built.bytes()


EXPECTED = b"".join(bytes([0x51 + i, 0, 0, 0, 0, 0, 0, 0]) for i in range(len(OFFSETS)))


def _kernel():
    out = CapturedOutput(name=b"pipe:[1]")
    return Kernel(KernelConfig(stdin=CapturedOutput(), stdout=out, stderr=CapturedOutput())), out


def test_two_gib_bss_runs_and_costs_only_the_pages_touched(tmp_path, arch):
    path = write_program(tmp_path, f"bigbss-{arch}", big_bss_program(arch))
    kernel, out = _kernel()
    proc = kernel.spawn(str(path).encode(), [b"bigbss"], [])
    bss = proc.space.vm.vma_at(build_elf(32 if arch == "i386" else 64).data_vaddr)
    assert bss.end - bss.start >= BSS
    assert kernel.run(proc) == 0
    assert out.data == EXPECTED


def test_untouched_bss_holds_no_host_memory(tmp_path, arch):
    path = write_program(tmp_path, f"bigbss-{arch}", big_bss_program(arch))
    kernel, _ = _kernel()
    proc = kernel.spawn(str(path).encode(), [b"bigbss"], [])
    # Before the program runs: the file's pages and the initial stack, nothing of the bss.
    assert proc.space.machine.mem.resident_bytes() < 1 << 20


def test_two_gib_bss_matches_native(tmp_path, arch):
    path = write_program(tmp_path, f"bigbss-{arch}", big_bss_program(arch))
    native = subprocess.run([str(path)], capture_output=True, timeout=20)
    assert (native.returncode, native.stdout) == (0, EXPECTED)


def test_bss_over_the_stack_is_refused_with_the_reason(tmp_path):
    """i386: from 0x0804a000, 2.9 GiB reaches the stack below 0xbffff000 (Linux: EEXIST)."""
    path = write_program(tmp_path, "overstack", big_bss_program("i386", memsz=0xB7F0_0000))
    kernel, _ = _kernel()
    with pytest.raises(KernelError, match=r"overlaps the stack") as info:
        kernel.spawn(str(path).encode(), [b"overstack"], [])
    assert "\n" not in str(info.value)


def test_bss_over_the_memory_limit_is_refused_with_the_reason(tmp_path):
    path = write_program(tmp_path, "huge", big_bss_program("x86_64", memsz=5 << 30))
    kernel, _ = _kernel()
    with pytest.raises(KernelError, match=r"does not fit the guest memory limit \(4096 MiB\)") as info:
        kernel.spawn(str(path).encode(), [b"huge"], [])
    assert "\n" not in str(info.value)
