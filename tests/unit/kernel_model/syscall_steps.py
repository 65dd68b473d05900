"""A guest program that makes a list of syscalls and reports every result: the kernel tests'
way to check several answers of one process on both ABIs.

Each step is (name, arg...). An argument is an int, a bytes string (placed, NUL-terminated, in
the program's data) or "BUF"/"BUF2" (two 256-byte scratch buffers on the stack). After the
steps the program writes the results (one signed word each) and then both buffers to fd 1,
and exits 0. The program runs as /prog of a rootfs folder the test gives.
"""
import io
import struct
from pathlib import Path

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import CODE_OFFSET, DATA_OFFSET, build_elf

NR = {
    "i386": {"chroot": 61, "chdir": 12, "fchdir": 133, "getcwd": 183, "open": 5, "openat": 295,
             "read": 3, "close": 6, "rename": 38, "symlink": 83, "mkdir": 39, "getdents64": 220,
             "readlink": 85, "fstat": 108, "write": 4, "ftruncate": 93, "lseek": 19, "rmdir": 40},
    "x86_64": {"chroot": 161, "chdir": 80, "fchdir": 81, "getcwd": 79, "open": 2, "openat": 257,
               "read": 0, "close": 3, "rename": 82, "symlink": 88, "mkdir": 83,
               "getdents64": 217, "readlink": 89, "fstat": 5, "write": 1, "ftruncate": 77,
               "lseek": 8, "rmdir": 84},
}
REGS = {"i386": ("ebx", "ecx", "edx", "esi"), "x86_64": ("rdi", "rsi", "rdx", "r10")}
ENTER = {"i386": "int 0x80", "x86_64": "syscall"}
WORD = {"i386": "dword", "x86_64": "qword"}
SP = {"i386": "esp", "x86_64": "rsp"}
AX = {"i386": "eax", "x86_64": "rax"}
BUF_SIZE = 256
BUFFERS = {"BUF": 0, "BUF2": BUF_SIZE}     # offsets in the stack scratch
RESULTS = 2 * BUF_SIZE                    # the results area follows them


def script_source(arch: str, steps, data_addr: int) -> tuple[str, bytes]:
    data, where = b"", {}
    for _, *args in steps:
        for arg in args:
            if isinstance(arg, bytes) and arg not in where:
                where[arg] = data_addr + len(data)
                data += arg + b"\0"
    sp, width = SP[arch], 4 if arch == "i386" else 8
    lines = [f"sub {sp}, 1024"]
    for i, (name, *args) in enumerate(steps):
        lines.append(f"mov eax, {NR[arch][name]}")
        for reg, arg in zip(REGS[arch], args):
            if arg in BUFFERS:
                lines.append(f"lea {reg}, [{sp} + {BUFFERS[arg]}]")
                continue
            lines.append(f"mov {reg}, {where[arg] if isinstance(arg, bytes) else arg}")
        lines.append(ENTER[arch])
        lines.append(f"mov {WORD[arch]} ptr [{sp} + {RESULTS + i * width}], {AX[arch]}")
    count = len(steps) * width
    assert RESULTS + count <= 1024, "too many steps"
    lines += _write(arch, f"{sp} + {RESULTS}", count) + _write(arch, sp, 2 * BUF_SIZE)
    lines += ["mov eax, 1; xor ebx, ebx; int 0x80"] if arch == "i386" else \
             ["mov eax, 60; xor edi, edi; syscall"]
    return "; ".join(lines), data


def _write(arch: str, address: str, count: int) -> list[str]:
    regs = REGS[arch]
    return [f"mov eax, {NR[arch]['write']}", f"mov {regs[0]}, 1", f"lea {regs[1]}, [{address}]",
            f"mov {regs[2]}, {count}", ENTER[arch]]


def script_elf(arch: str, steps) -> bytes:
    built = build_elf(32 if arch == "i386" else 64)
    code = asm(script_source(arch, steps, built.entry)[0], arch, built.entry)
    source, data = script_source(arch, steps, built.entry + len(code))
    code = asm(source, arch, built.entry)
    blob = code + data
    assert CODE_OFFSET + len(blob) <= DATA_OFFSET, "script too long"
    text = built.load_indexes[0]
    built.set_phdr(text, "filesz", CODE_OFFSET + len(blob))
    built.set_phdr(text, "memsz", CODE_OFFSET + len(blob))
    built.data[CODE_OFFSET:CODE_OFFSET + len(blob)] = blob
    return built.bytes()


def run_script(rootfs: Path, arch: str, steps, *, writable: bool = False,
               **config) -> tuple[list[int], bytes, Kernel]:
    """Run the steps as /prog in `rootfs`: (results, BUF then BUF2, kernel)."""
    program = rootfs / "prog"
    program.write_bytes(script_elf(arch, steps))
    program.chmod(0o755)
    out = CapturedOutput()
    kernel = Kernel(KernelConfig(rootfs=str(rootfs), writable=writable, stdin=CapturedOutput(),
                                 stdout=out, stderr=CapturedOutput(), report=io.StringIO(),
                                 **config))
    status = kernel.run(kernel.spawn(b"/prog", [b"prog"], []))
    assert status == 0, f"status {status:#x}"
    assert not kernel.unimplemented, kernel.unimplemented
    width = 4 if arch == "i386" else 8
    written = out.data
    raw = written[:len(steps) * width]
    results = list(struct.unpack(f"<{len(steps)}{'i' if width == 4 else 'q'}", raw))
    return results, written[len(steps) * width:], kernel
