"""fib(n) under trapline vs the same machine code in a bare Unicorn loop (the emulator's limit).

Bare: the fib sample's segments mapped into a plain Uc with no hooks, `fib(n)` called directly
with a return address that stops emulation. trapline: the whole program (`fib N`) in the Sandbox,
start-up, kernel, syscalls and all. Goal (issue 2): trapline >= 0.9 of bare speed.
"""
import struct

from unicorn import UC_ARCH_X86, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X

from loader.elf import load_elf_file
from trapline import Sandbox

from .common import SAMPLES, best_of

STOP = 0x1000          # return address: an unmapped page the emulation stops at


def bare_fib(arch: str, n: int):
    """A ready-to-run bare Uc calling fib(n); returns the function that runs it."""
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    uc = Uc(UC_ARCH_X86, UC_MODE_32 if arch == "i386" else UC_MODE_64)
    for seg in image.segments:
        lo = seg.vaddr & ~0xFFF
        hi = (seg.vaddr + seg.memsz + 0xFFF) & ~0xFFF
        try:
            uc.mem_map(lo, hi - lo)
        except Exception:
            pass
        uc.mem_write(seg.vaddr, seg.data)
    uc.mem_map(0x7000_0000, 0x100_0000)
    sp = 0x7100_0000 - 0x100
    fib = image.symbols.lookup("fib").addr
    if arch == "i386":
        sp -= 8
        uc.mem_write(sp, struct.pack("<II", STOP, n))      # cdecl: return address, then n
        uc.reg_write(X.UC_X86_REG_ESP, sp)
    else:
        sp -= 8
        uc.mem_write(sp, struct.pack("<Q", STOP))
        uc.reg_write(X.UC_X86_REG_RSP, sp)
        uc.reg_write(X.UC_X86_REG_RDI, n)
    start = uc.context_save()

    def run() -> int:
        uc.context_restore(start)
        uc.emu_start(fib, STOP)
        return uc.reg_read(X.UC_X86_REG_EAX)
    run.uc, run.fib = uc, fib
    return run


def trapline_fib(arch: str, n: int) -> bytes:
    result = Sandbox().run([str(SAMPLES / arch / "fib"), str(n)])
    assert result.exit_code == 0, result
    return result.stdout


def run(n: int = 30) -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        t_bare, value = best_of(bare_fib(arch, n))
        t_trap, out = best_of(lambda: trapline_fib(arch, n))
        assert out == f"fib({n}) = {value}\n".encode(), (out, value)
        lines.append(f"fib({n}) {arch:6}: bare Unicorn {t_bare * 1e3:7.1f} ms, trapline {t_trap * 1e3:7.1f} ms"
                     f" -> trapline runs at {t_bare / t_trap:.2f} of bare speed (goal >= 0.90)")
    return lines
