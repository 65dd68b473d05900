"""Compute-bound code, broken down (issue 31): SHA-256 of 8 MiB under QEMU user mode, a bare
Unicorn loop and trapline, with the cost of each hook trapline's Machine installs.

The same machine code everywhere: samples/sha256's hash_buffer(n) (no libc call, no syscall).
For each arch:
  * whole processes, CPU time (rusage) of `sha256 8388608` minus that of `sha256 0` (start-up
    and exit taken out), best of R: native, `qemu-ARCH` (user mode, when installed) and
    `python3 -m trapline run`; and Debian's busybox `sha256sum` of an 8 MiB file (when
    fetched: tests/e2e/.cache), QEMU against trapline, minus an empty file's run;
  * in this process, hash_buffer(8 MiB) called directly (fib_speed's way), CPU time, best of R:
      - bare: a plain Uc with no hook, Unicorn's own TLB (every page RWX: with paging off,
        QEMU's x86 tlb_fill grants all, and every store takes the slow path, emu/tlb.py);
      - the page walker of emu/tlb.py (UC_TLB_VIRTUAL and a TLB-fill callback), every page
        RWX as above, then each page with its own permissions: the base the hooks are priced on,
        trapline's own arrangement;
      - that base + each other hook of emu/machine.py alone: the interrupt hook (a raw ctypes
        UC_HOOK_INTR), the #UD hook (UC_HOOK_INSN_INVALID through the binding), CPUID
        (UC_HOOK_INSN, emu/cpuid.py) and SYSCALL (UC_HOOK_INSN, x86-64 only);
      - trapline's Machine (all of them, its run()), the memory mapped with each segment's
        own permissions as exec maps it.
  The digest is checked against hashlib every time.
Ratios: trapline's compute over QEMU's, the Machine over the walker base (goal <= 1.1x).
`python3 -m bench.compute [--repeat=N] [--arch=x86_64|i386]`.
"""
import ctypes
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from unicorn import UC_ARCH_X86, UC_HOOK_INSN, UC_HOOK_INSN_INVALID, UC_HOOK_INTR, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X

from emu import cpuid
from emu.internals.binding import HOOK_INSN_SYSCALL_CFUNC, HOOK_INTR_CFUNC
from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE
from emu.raw_hooks import add_raw_hook
from emu.tlb import page_walker
from loader.elf import load_elf_file

from .common import ROOT, SAMPLES

SIZE = 8 << 20
STOP = 0x1000                  # return address: an unmapped page the emulation stops at
STACK_TOP, STACK_SIZE = 0x7100_0000, 0x10_0000
ARCHES = ("x86_64", "i386")
BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{deb}" / "root" / "bin" / "busybox"
DEB_ARCH = {"x86_64": "amd64", "i386": "i386"}


def expected_digest(n: int) -> bytes:
    return hashlib.sha256(bytes((i * 131 + 7) & 0xFF for i in range(n))).digest()


def _cpu(fn) -> tuple[float, object]:
    t0 = time.process_time()
    result = fn()
    return time.process_time() - t0, result


# ---- whole processes ---------------------------------------------------------------------
def _process_cpu(argv: list[str], stdin=None) -> float:
    """CPU seconds (user+sys) of one run of argv as a process; it must exit 0."""
    child = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:4]} failed: {err.decode()[-300:]}")
    return usage.ru_utime + usage.ru_stime


def _compute_only(prefix: list[str], full: list[str], empty: list[str], repeat: int) -> float:
    """Best CPU of `prefix + full` minus best CPU of `prefix + empty` (start-up and exit)."""
    return (min(_process_cpu(prefix + full) for _ in range(repeat))
            - min(_process_cpu(prefix + empty) for _ in range(repeat)))


def process_lines(arch: str, repeat: int) -> list[str]:
    program = str(SAMPLES / arch / "sha256")
    runners = [("native", [])]
    qemu = shutil.which(f"qemu-{arch}")
    if qemu:
        runners.append((f"qemu-{arch} (user mode)", [qemu]))
    runners.append(("trapline run", [sys.executable, "-m", "trapline", "run", "--"]))
    figures = {label: _compute_only(prefix, [program, str(SIZE)], [program, "0"], repeat)
               for label, prefix in runners}
    lines = [f"{arch} sha256 sample, {SIZE >> 20} MiB, whole processes (CPU, start-up subtracted):"]
    lines += [f"  {label:24}: {seconds * 1e3:8.1f} ms" for label, seconds in figures.items()]
    if qemu:
        lines.append(f"  trapline / QEMU: {figures['trapline run'] / figures[runners[1][0]]:.2f}x")
    return lines + busybox_lines(arch, qemu, repeat)


def busybox_lines(arch: str, qemu: str | None, repeat: int) -> list[str]:
    busybox = Path(str(BUSYBOX).format(deb=DEB_ARCH[arch]))
    if not busybox.is_file():
        return [f"  busybox sha256sum: not fetched (python3 tests/e2e/fetch_debian_bins.py)"]
    with tempfile.TemporaryDirectory(prefix="trapline-compute-") as tmp:
        data, empty = Path(tmp) / "data", Path(tmp) / "empty"
        data.write_bytes(bytes((i * 131 + 7) & 0xFF for i in range(SIZE)))
        empty.write_bytes(b"")
        runners = [(f"qemu-{arch}", [qemu])] if qemu else []
        runners.append(("trapline run", [sys.executable, "-m", "trapline", "run", "--"]))
        figures = {label: _compute_only(prefix, [str(busybox), "sha256sum", str(data)],
                                        [str(busybox), "sha256sum", str(empty)], repeat)
                   for label, prefix in runners}
    line = "  busybox sha256sum 8 MiB file: " + ", ".join(f"{label} {s * 1e3:.1f} ms" for label, s in figures.items())
    if qemu:
        line += f" -> trapline / QEMU {figures['trapline run'] / figures[runners[0][0]]:.2f}x"
    return [line]


# ---- in this process: the function alone --------------------------------------------------
def page_runs(image) -> list[tuple[int, int, int]]:
    """(start, size, perms) of runs of pages holding the segments (bss included), each page with
    the union of its segments' permissions (loader's PERM_* bits are Unicorn's UC_PROT_*)."""
    pages: dict[int, int] = {}
    for seg in image.segments:
        for page in range(seg.vaddr & ~0xFFF, seg.vaddr + seg.memsz, 0x1000):
            pages[page] = pages.get(page, 0) | seg.perms
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and runs[-1][0] + runs[-1][1] == page and runs[-1][2] == pages[page]:
            runs[-1][1] += 0x1000
        else:
            runs.append([page, 0x1000, pages[page]])
    return [tuple(run) for run in runs]


class Call:
    """hash_buffer(n) ready to run on an emulator: `run()` runs it and returns the digest."""

    def __init__(self, arch: str, n: int, *, machine: Machine | None = None):
        self.arch, self.n = arch, n
        self.image = image = load_elf_file(str(SAMPLES / arch / "sha256"))
        self.function = image.symbols.lookup("hash_buffer").addr
        self.digest = image.symbols.lookup("digest").addr
        self.machine = machine
        self.uc = machine.uc if machine else Uc(UC_ARCH_X86, UC_MODE_32 if arch == "i386" else UC_MODE_64)
        self._map(image)
        self.start = self.uc.context_save()

    def _map(self, image) -> None:
        for start, size, perms in page_runs(image):
            if self.machine:
                self.machine.mem.map(start, size, perms)
            else:
                self.uc.mem_map(start, size)
        for seg in image.segments:
            self.uc.mem_write(seg.vaddr, bytes(seg.data))
        if self.machine:
            self.machine.mem.map(STACK_TOP - STACK_SIZE, STACK_SIZE, PROT_READ | PROT_WRITE)
        else:
            self.uc.mem_map(STACK_TOP - STACK_SIZE, STACK_SIZE)
        sp = STACK_TOP - 0x100
        if self.arch == "i386":
            sp -= 8
            self.uc.mem_write(sp, struct.pack("<II", STOP, self.n))     # cdecl: return, then n
            self.uc.reg_write(X.UC_X86_REG_ESP, sp)
        else:
            sp -= 8
            self.uc.mem_write(sp, struct.pack("<Q", STOP))
            self.uc.reg_write(X.UC_X86_REG_RSP, sp)
            self.uc.reg_write(X.UC_X86_REG_RDI, self.n)

    def run(self) -> bytes:
        self.uc.context_restore(self.start)
        if self.machine:
            exit_ = self.machine.run(self.function, until=STOP)
            assert exit_.kind == "stopped", exit_
        else:
            self.uc.emu_start(self.function, STOP)
        return b"".join(struct.pack(">I", w) for w in struct.unpack("<8I", self.uc.mem_read(self.digest, 32)))


def _with_interrupt_hook(uc):
    return add_raw_hook(uc, UC_HOOK_INTR, HOOK_INTR_CFUNC, lambda *_: None)


def _with_invalid_hook(uc):
    return uc.hook_add(UC_HOOK_INSN_INVALID, lambda *_: False)


def _with_syscall_hook(uc):
    return add_raw_hook(uc, UC_HOOK_INSN, HOOK_INSN_SYSCALL_CFUNC, lambda *_: None,
                        ctypes.c_int(X.UC_X86_INS_SYSCALL))


def _with_page_walker(call: "Call", all_rwx: bool = False):
    """emu/tlb.py's walker on `call`'s Uc, each page with its own permissions (the stack RW),
    or every page RWX (`all_rwx`: what Unicorn's own TLB gives, for comparison)."""
    perms = {}
    for start, size, prot in page_runs(call.image):
        perms.update((page, prot) for page in range(start, start + size, 0x1000))
    stack = range(STACK_TOP - STACK_SIZE, STACK_TOP)

    def perms_at(page):
        if all_rwx:
            return PROT_READ | PROT_WRITE | PROT_EXEC
        return perms.get(page, PROT_READ | PROT_WRITE if page in stack else None)
    return page_walker(call.uc, perms_at, lambda *_: None, bits=32 if call.arch == "i386" else 64)


def hook_variants(arch: str):
    """(label, installers(call)) of each arrangement timed on a bare Uc: Unicorn's defaults,
    then the page walker (the base: trapline's TLB arrangement), then each other hook of the
    Machine on top of it."""
    walker = ("page walker (UC_TLB_VIRTUAL + TLB fill, each page's permissions)", _with_page_walker)
    variants = [("bare Unicorn, its own TLB (every page RWX)", ()),
                ("page walker, every page RWX", ((lambda call: _with_page_walker(call, True)),)),
                (walker[0], (walker[1],)),
                ("  + interrupt hook (raw UC_HOOK_INTR)", (walker[1], lambda c: _with_interrupt_hook(c.uc))),
                ("  + #UD hook (UC_HOOK_INSN_INVALID)", (walker[1], lambda c: _with_invalid_hook(c.uc))),
                ("  + CPUID hook (UC_HOOK_INSN)", (walker[1], lambda c: cpuid.install(c.uc)))]
    if arch == "x86_64":
        variants.append(("  + SYSCALL hook (raw UC_HOOK_INSN)", (walker[1], lambda c: _with_syscall_hook(c.uc))))
    return variants


def in_process_lines(arch: str, repeat: int) -> list[str]:
    expected = expected_digest(SIZE)
    lines = [f"{arch} hash_buffer({SIZE >> 20} MiB) alone, CPU, best of {repeat}:"]
    base = None
    for label, installers in hook_variants(arch):
        call = Call(arch, SIZE)
        kept = [install(call) for install in installers]      # noqa: F841  (hooks stay referenced)
        seconds = _timed_call(call, expected, repeat)
        if installers and installers[0] is _with_page_walker and len(installers) == 1:
            base = seconds
        shown = f"({seconds / base:.2f}x walker base)" if base else ""
        lines.append(f"  {label:64}: {seconds * 1e3:8.1f} ms  {shown}")
    machine = Machine(arch)
    seconds = _timed_call(Call(arch, SIZE, machine=machine), expected, repeat)
    lines.append(f"  {'trapline Machine (all of its hooks, its run())':64}: {seconds * 1e3:8.1f} ms  "
                 f"({seconds / base:.2f}x walker base; goal <= 1.10x)")
    return lines


def _timed_call(call: Call, expected: bytes, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        seconds, digest = _cpu(call.run)
        assert digest == expected, (digest.hex(), expected.hex())
        best = min(best, seconds)
    return best


def run(repeat: int = 3, arches=ARCHES) -> list[str]:
    lines = []
    for arch in arches:
        lines += process_lines(arch, repeat) + in_process_lines(arch, repeat)
    return lines


if __name__ == "__main__":
    count = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--repeat=")), 3)
    chosen = tuple(a.split("=", 1)[1] for a in sys.argv if a.startswith("--arch=")) or ARCHES
    for text in run(count, chosen):
        print(text, flush=True)
