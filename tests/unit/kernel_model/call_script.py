"""Run a script of system calls in a guest and get every result and a scratch buffer back.

The guest (tests/property/syscall_fuzz_guest.py's ELF: code, a read-only page, a data
segment with path strings; by default in a fresh rootfs with the files those paths name) makes each call in turn, stores its eax/rax in RESULTS, then writes
RESULTS and BUF to stdout and exits. Arguments: an int, a str naming a path of PATHS (its
address), "BUF" / "BUF+n" (the scratch buffer), "RO" (the read-only page), or "@i" (the
result of call i, read from RESULTS when the call is made).
"""
import io
import struct
import tempfile
from pathlib import Path

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.syscalls import numbers_i386, numbers_x86_64
from tests.property.syscall_fuzz_guest import (DATA, DATA_VADDR, INT80_REGISTERS, PATH_ADDRESSES,
                                               PATHS, RO_VADDR, SYSCALL_REGISTERS, elf,
                                               encode_call, make_rootfs)

RESULTS = DATA_VADDR + 0x3000
BUF = DATA_VADDR + 0x3400
BUF_SIZE = 0xC00
NUMBER = {"i386": {n: nr for nr, n in numbers_i386.NUMBERS.items()},
          "x86_64": {n: nr for nr, n in numbers_x86_64.NUMBERS.items()}}
GATE = {"i386": "int80", "x86_64": "syscall"}


def _word(arg) -> int:
    if isinstance(arg, int):
        return arg
    if arg.startswith("@"):
        return 0                      # loaded from RESULTS just before the call (_load_result)
    if arg == "RO":
        return RO_VADDR
    if arg.startswith("BUF"):
        return BUF + int(arg[4:] or 0)
    return PATH_ADDRESSES[PATHS.index(arg.encode())]


def _load_result(arch: str, reg: int, index: int) -> bytes:
    """mov reg, [RESULTS + 8*index]: an argument that is an earlier call's result, "@index"
    (8B /r with a 32-bit absolute address: Intel SDM Vol. 2B, MOV; 2A 2.2.1.6 for the SIB
    form x86-64 needs, since mod 00 r/m 101 is RIP-relative there)."""
    address = struct.pack("<I", RESULTS + 8 * index)
    if arch == "x86_64":
        return bytes((0x48 | (4 if reg >= 8 else 0), 0x8B, (reg & 7) << 3 | 4, 0x25)) + address
    return bytes((0x8B, reg << 3 | 5)) + address


def _store_result(arch: str, index: int) -> bytes:
    """mov [RESULTS + 8*index], eax/rax (A3 moffs: Intel SDM Vol. 2B, MOV)."""
    address = RESULTS + 8 * index
    if arch == "x86_64":
        return b"\x48\xa3" + struct.pack("<Q", address)
    return b"\xa3" + struct.pack("<I", address)


def run_script(arch: str, calls, *, data: bytes = b"", rootfs=None, kernel_config=None):
    """(results as signed ints, BUF's bytes, the kernel) after `calls` = [(name, *args)].
    `data` is copied to BUF before the run."""
    gate = GATE[arch]
    code = bytearray()
    for i, (name, *args) in enumerate(calls):
        words = [_word(a) for a in args] + [0] * (6 - len(args))
        call = encode_call(arch, gate, NUMBER[arch][name], words)
        registers = SYSCALL_REGISTERS if gate == "syscall" else INT80_REGISTERS
        loads = b"".join(_load_result(arch, reg, int(a[1:])) for reg, a in zip(registers[1:], args)
                         if isinstance(a, str) and a.startswith("@"))
        code += call[:-2] + loads + call[-2:]            # the loads go before the gate
        code += _store_result(arch, i)
    write = NUMBER[arch]["write"]
    code += encode_call(arch, gate, write, (1, RESULTS, 8 * len(calls), 0, 0, 0))
    code += encode_call(arch, gate, write, (1, BUF, BUF_SIZE, 0, 0, 0))
    code += encode_call(arch, gate, NUMBER[arch]["exit_group"], (0,) * 6)
    at = BUF - DATA_VADDR
    image = DATA[:at] + data + DATA[at + len(data):]
    return _run(arch, elf(arch, bytes(code), image), len(calls), rootfs, kernel_config or {})


def _run(arch, program: bytes, count: int, rootfs, extra):
    with tempfile.TemporaryDirectory(prefix="trapline-script-") as folder:
        root = Path(rootfs) if rootfs is not None else Path(folder)
        if rootfs is None:
            make_rootfs(root)
        path = root / f"script-{arch}"
        path.write_bytes(program)
        path.chmod(0o755)
        stdout = CapturedOutput()
        kernel = Kernel(KernelConfig(rootfs=str(root), stdin=CapturedOutput(), stdout=stdout,
                                     stderr=CapturedOutput(), report=io.StringIO(), **extra))
        status = kernel.run(kernel.spawn(f"/script-{arch}".encode(), [b"script"], []))
    assert status == 0, f"script ended with status {status:#x}: {kernel.messages}"
    out = stdout.data
    word = 4 if arch == "i386" else 8
    results = []
    for i in range(count):
        value = int.from_bytes(out[8 * i:8 * i + word], "little")
        results.append(value - (1 << 8 * word) if value >> (8 * word - 1) else value)
    return results, out[8 * count:8 * count + BUF_SIZE], kernel
