"""mknodat (fifos, regular files, devices in the overlay), fifo opens and sched_{get,set}affinity,
from tiny guest programs on both ABIs: each program makes its calls and exits with the low
byte of the last result (-errno & 0xff on failure)."""
import io

import pytest

from kernel_model import errno as E

from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import CODE_OFFSET, DATA_OFFSET, build_elf

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

from ..test_syscalls import UNMAPPED, exit_code
from ...tinyelf import write_program


def long_elf(arch: str, source: str, data: bytes = b"") -> bytes:
    """tiny_elf for programs longer than its code area: program_elf's layout (the text
    PT_LOAD grows), with `data` right after the code at DATA_ADDR."""
    built = build_elf(32 if arch == "i386" else 64)
    code = asm(source.replace("DATA_ADDR", hex(built.entry)), arch, built.entry)
    code = asm(source.replace("DATA_ADDR", hex(built.entry + len(code))), arch, built.entry)
    blob = code + data
    assert CODE_OFFSET + len(blob) <= DATA_OFFSET
    text = built.load_indexes[0]
    built.set_phdr(text, "filesz", CODE_OFFSET + len(blob))
    built.set_phdr(text, "memsz", CODE_OFFSET + len(blob))
    built.data[CODE_OFFSET:CODE_OFFSET + len(blob)] = blob
    return built.bytes()


def run_program(tmp_path, arch, source, data=b""):
    path = write_program(tmp_path, f"prog-{arch}", long_elf(arch, source, data))
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"prog"], []))
    return status, None, kernel

NR = {
    "i386": {"mknodat": 297, "openat": 295, "getaff": 242, "setaff": 241, "mknod": 14},
    "x86_64": {"mknodat": 259, "openat": 257, "getaff": 204, "setaff": 203, "mknod": 133},
}
REGS = {"i386": ("ebx", "ecx", "edx", "esi"), "x86_64": ("rdi", "rsi", "rdx", "r10")}
ENTER = {"i386": "int 0x80", "x86_64": "syscall"}
EXIT = {"i386": "mov ebx, eax; mov eax, 1; int 0x80", "x86_64": "mov edi, eax; mov eax, 60; syscall"}
SP = {"i386": "esp", "x86_64": "rsp"}
AT_FDCWD = -100
S_IFIFO, S_IFCHR, S_IFDIR, S_IFREG = 0o010000, 0o020000, 0o040000, 0o100000
O_WRONLY, O_NONBLOCK = 0o1, 0o4000
PATH = b"/tmp/trapline-unit-fifo\0"      # made in the overlay only: the host is untouched


def calls(arch: str, *steps) -> str:
    """Assembly for syscalls `steps` = (name, arg...), then exit with the last result.
    An argument "SP" is a 256-byte scratch buffer on the stack."""
    lines = [f"sub {SP[arch]}, 512"]
    for name, *args in steps:
        lines.append(f"mov eax, {NR[arch][name]}")
        for reg, arg in zip(REGS[arch], args):
            value = SP[arch] if arg == "SP" else arg
            lines.append(f"mov {reg}, {value}")
        lines.append(ENTER[arch])
    return "; ".join(lines + [EXIT[arch]])


def result(tmp_path, arch, *steps, data=PATH) -> int:
    status, _, kernel = run_program(tmp_path, arch, calls(arch, *steps), data)
    assert not kernel.unimplemented, kernel.unimplemented
    return exit_code(status)


def err(errno: int) -> int:
    return -errno & 0xFF


# ---- mknodat ---------------------------------------------------------------------------------
def test_mkfifo_then_again_is_eexist(tmp_path, arch):
    mk = ("mknodat", AT_FDCWD, "DATA_ADDR", S_IFIFO | 0o644, 0)
    assert result(tmp_path, arch, mk) == 0
    assert result(tmp_path, arch, mk, mk) == err(E.EEXIST)


def test_mknodat_of_a_device_by_root_is_an_overlay_node(tmp_path, arch):
    """root holds CAP_MKNOD: the device node is the overlay's (the host is untouched)."""
    assert result(tmp_path, arch, ("mknodat", AT_FDCWD, "DATA_ADDR", S_IFCHR | 0o600, 0x103)) == 0
    assert not (tmp_path / "tmp" / "trapline-unit-fifo").exists()


@pytest.mark.parametrize(("mode", "expected"), [
    (S_IFDIR | 0o755, E.EINVAL),         # may_mknod(): mkdir makes directories
    (0o170000, E.EINVAL),                # no such type
])
def test_mknodat_refusals(tmp_path, arch, mode, expected):
    assert result(tmp_path, arch, ("mknodat", AT_FDCWD, "DATA_ADDR", mode, 0x103)) == err(expected)


def test_mknod_of_a_regular_file_and_bad_pointer(tmp_path, arch):
    assert result(tmp_path, arch, ("mknod", "DATA_ADDR", S_IFREG | 0o600, 0)) == 0
    assert result(tmp_path, arch, ("mknod", "DATA_ADDR", 0o600, 0)) == 0       # type 0 = regular
    assert result(tmp_path, arch, ("mknod", UNMAPPED, S_IFIFO | 0o600, 0)) == err(E.EFAULT)


def test_fifo_nonblocking_opens(tmp_path, arch):
    mk = ("mknodat", AT_FDCWD, "DATA_ADDR", S_IFIFO | 0o644, 0)
    read_nb = ("openat", AT_FDCWD, "DATA_ADDR", O_NONBLOCK, 0)
    write_nb = ("openat", AT_FDCWD, "DATA_ADDR", O_WRONLY | O_NONBLOCK, 0)
    # fifo_open(): a non-blocking writer needs a reader (ENXIO); a non-blocking reader does not.
    assert result(tmp_path, arch, mk, write_nb) == err(E.ENXIO)
    assert result(tmp_path, arch, mk, read_nb) == 3
    assert result(tmp_path, arch, mk, read_nb, write_nb) == 4


# ---- affinity --------------------------------------------------------------------------------
@pytest.mark.parametrize(("pid", "size", "expected"), [
    (0, 128, 32),           # min(len, cpumask_size()): CONFIG_NR_CPUS (256) bits, cpu/cpus.py
    (1, 8, 8),              # the virtual init
    (0, 0, -E.EINVAL),      # fewer bits than nr_cpu_ids
    (0, 6, -E.EINVAL),      # not a whole number of longs
    (4242, 8, -E.ESRCH),
    (-5, 8, -E.ESRCH),
])
def test_sched_getaffinity(tmp_path, arch, pid, size, expected):
    assert result(tmp_path, arch, ("getaff", pid, size, "SP")) == expected & 0xFF


def test_sched_getaffinity_on_i386_may_ask_for_one_compat_long(tmp_path):
    assert result(tmp_path, "i386", ("getaff", 0, 4, "SP")) == 4


def test_sched_getaffinity_writes_cpu_0_only(tmp_path, arch):
    sp = SP[arch]
    source = calls(arch, ("getaff", 0, 8, "SP")).replace(
        EXIT[arch], f"movzx eax, byte ptr [{sp}]; add al, byte ptr [{sp}+7]; " + EXIT[arch])
    source = source.replace(f"sub {sp}, 512", f"sub {sp}, 512; mov dword ptr [{sp}], -1; "
                                              f"mov dword ptr [{sp}+4], -1")
    status, _, _ = run_program(tmp_path, arch, source)
    assert exit_code(status) == 1


@pytest.mark.parametrize(("mask", "pid", "size", "expected"), [
    (b"\x01", 0, 8, 0),
    (b"\x03", 1, 8, 0),                 # CPUs beyond the modeled one are ignored
    (b"\x01", 0, 1, 0),                 # a short mask is zero-extended
    (b"\x02", 0, 8, -E.EINVAL),         # no modeled CPU in the mask
    (b"\x01", 0, 0, -E.EINVAL),         # empty
    (b"\x01", 4242, 8, -E.ESRCH),
])
def test_sched_setaffinity(tmp_path, arch, mask, pid, size, expected):
    got = result(tmp_path, arch, ("setaff", pid, size, "DATA_ADDR"), data=mask.ljust(16, b"\0"))
    assert got == expected & 0xFF


def test_sched_setaffinity_bad_pointer(tmp_path, arch):
    assert result(tmp_path, arch, ("setaff", 0, 8, UNMAPPED)) == err(E.EFAULT)
