"""fib(n) under trapline vs the same machine code in a bare Unicorn loop (the emulator's limit).

Bare: the fib sample's segments mapped into a plain Uc, `fib(n)` called directly with a return
address that stops emulation. Its TLB is filled as trapline's Machine fills it (emu/tlb.py's
page walker: UC_TLB_VIRTUAL, each page with its own permissions), the fair baseline: with
Unicorn's own TLB every page looks executable and every store to the stack takes Unicorn's slow
path (the erratum emu/tlb.py describes), which fib's calls pay on every frame, so that baseline
is slower than trapline itself. Both are shown; the ratio is against the page walker's.
trapline: the whole program (`fib N`) in the Sandbox, start-up, kernel, syscalls and all.
Goal (issue 2): trapline >= 0.9 of bare speed. CPU time of this process, best of 3 (a busy host
disturbs it less than wall time).
"""
import struct
import time

from unicorn import UC_ARCH_X86, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X

from emu.memory import PROT_READ, PROT_WRITE
from emu.tlb import page_walker
from loader.elf import load_elf_file
from trapline import Sandbox

from .common import SAMPLES, best_of

STOP = 0x1000          # return address: an unmapped page the emulation stops at
STACK = range(0x7000_0000, 0x7100_0000)


def bare_fib(arch: str, n: int, *, own_tlb: bool = False):
    """A ready-to-run bare Uc calling fib(n); returns the function that runs it. The Uc's TLB
    is filled by emu/tlb.py's page walker (each page's permissions: the segments' on their
    pages, read-write on the stack), unless `own_tlb` (Unicorn's default, every page RWX)."""
    image = load_elf_file(str(SAMPLES / arch / "fib"))
    uc = Uc(UC_ARCH_X86, UC_MODE_32 if arch == "i386" else UC_MODE_64)
    walker = None if own_tlb else _page_walker(uc, image, bits=32 if arch == "i386" else 64)
    for seg in image.segments:
        lo = seg.vaddr & ~0xFFF
        hi = (seg.vaddr + seg.memsz + 0xFFF) & ~0xFFF
        try:
            uc.mem_map(lo, hi - lo)
        except Exception:
            pass
        uc.mem_write(seg.vaddr, seg.data)
    uc.mem_map(STACK.start, len(STACK))
    sp = STACK.stop - 0x100
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
    run.uc, run.fib, run.walker, run.start = uc, fib, walker, start
    return run


def _page_walker(uc: Uc, image, *, bits: int):
    """The Machine's TLB arrangement on a bare Uc: each page gets the union of the permissions
    of the segments on it, the stack read-write; nothing else is mapped."""
    perms: dict[int, int] = {}
    for seg in image.segments:
        for page in range(seg.vaddr & ~0xFFF, seg.vaddr + seg.memsz, 0x1000):
            perms[page] = perms.get(page, 0) | seg.perms

    def perms_at(page: int):
        return perms.get(page, PROT_READ | PROT_WRITE if page in STACK else None)
    return page_walker(uc, perms_at, lambda *_: None, bits=bits)


def trapline_fib(arch: str, n: int) -> bytes:
    result = Sandbox().run([str(SAMPLES / arch / "fib"), str(n)])
    assert result.exit_code == 0, result
    return result.stdout


def run(n: int = 30) -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        t_own, value = best_of(bare_fib(arch, n, own_tlb=True), clock=time.process_time)
        t_bare, walked = best_of(bare_fib(arch, n), clock=time.process_time)
        t_trap, out = best_of(lambda: trapline_fib(arch, n), clock=time.process_time)
        assert out == f"fib({n}) = {value}\n".encode() and walked == value, (out, value, walked)
        lines.append(f"fib({n}) {arch:6}: bare Unicorn {t_bare * 1e3:7.1f} ms (its own TLB: {t_own * 1e3:7.1f} ms), "
                     f"trapline {t_trap * 1e3:7.1f} ms -> trapline runs at {t_bare / t_trap:.2f} of bare speed "
                     f"(goal >= 0.90)")
    return lines
