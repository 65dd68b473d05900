"""The host CPU as a second oracle (issue 29, "A second oracle"): the same pages at the same
addresses, the same registers and flags, run on the real processor.

Equivalence under Unicorn proves a relocation right only if Unicorn executes the instruction
right. `run_on_host(layout, original, copy, start)` forks a child that maps the layout's pages
itself (MAP_FIXED_NOREPLACE: an address the host process already uses is a skip, said so),
writes their contents and stops; the parent, its tracer (ptrace(2), as gdb), loads every
general-purpose register, the flags and the PC, lets it run to the first signal — SIGTRAP
from an int3 of the filler, SIGSEGV (siginfo's si_addr and si_code: not mapped or a
protection fault; the access kind is not known), SIGILL, SIGFPE — and reads back registers
and memory (/proc/PID/mem) before killing it. i386 code runs in the host's 32-bit
compatibility mode: the tracer sets CS to the 32-bit user code selector (0x23,
arch/x86/include/asm/segment.h __USER32_CS), which Linux accepts for a 64-bit task
(arch/x86/kernel/ptrace.c set_segment_reg: any selector with RPL 3) and returns to with IRET.

Only on x86-64 Linux hosts; elsewhere `host_unavailable()` says why.
"""
from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal

from emu.exits import BUDGET, FAULT, FETCH, TRAP, Exit

from .layouts import PAGE, Layout, machine_for
from .oracles import Outcome

PTRACE_TRACEME, PTRACE_CONT, PTRACE_GETREGS, PTRACE_SETREGS = 0, 7, 12, 13
PTRACE_GETSIGINFO = 0x4202
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
MAP_PRIVATE, MAP_ANONYMOUS, MAP_FIXED_NOREPLACE = 0x02, 0x20, 0x100000
USER32_CS, USER_DS = 0x23, 0x2B
SEGV_MAPERR = 1
HOST_CPU_SECONDS = 1               # the child's CPU limit: a run longer than this is a loop
_SIGNAL_VECTORS = {signal.SIGILL: 6, signal.SIGFPE: 0}     # #UD, #DE
_GPR64 = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
          "r12", "r13", "r14", "r15")


class _Regs(ctypes.Structure):
    """struct user_regs_struct (arch/x86/include/asm/user_64.h)."""
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx",
        "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds",
        "es", "fs", "gs")]


class _SigInfo(ctypes.Structure):
    """The head of siginfo_t: signo, errno, code, then (for faults) the address."""
    _fields_ = [("signo", ctypes.c_int), ("errno", ctypes.c_int), ("code", ctypes.c_int),
                ("pad", ctypes.c_int), ("addr", ctypes.c_ulonglong),
                ("rest", ctypes.c_byte * 104)]


class HostSkip(Exception):
    """The host cannot run this example (an address it already uses...): the reason."""


def host_unavailable() -> str | None:
    """Why the host CPU cannot be an oracle here, or None."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return f"the host is {platform.system()} {platform.machine()}, not x86-64 Linux"
    return None


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mmap.restype = ctypes.c_void_p
        _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.c_long]
        _libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _libc.ptrace.restype = ctypes.c_long
        _libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    return _libc


def _contents(layout: Layout, original: bytes, copy: bytes) -> list[tuple[int, int, int, bytes]]:
    """(start, size, prot, bytes) of every region, exactly as machine_for lays them out."""
    m = machine_for(layout, original, copy)
    try:
        return [(s, n, p, m.mem.read(s, n)) for s, n, p in layout.regions]
    finally:
        m.close()


def _child(regions) -> None:
    """In the forked child: be traced, map and fill the pages, stop. Never returns."""
    try:
        # A copy that never reaches the filler (a loop) must not hang the check: the kernel
        # sends SIGXCPU at the soft limit (kernel/time/posix-cpu-timers.c), a stop the tracer sees.
        resource.setrlimit(resource.RLIMIT_CPU, (HOST_CPU_SECONDS, HOST_CPU_SECONDS + 1))
        libc = _c()
        libc.ptrace(PTRACE_TRACEME, 0, None, None)
        for start, size, _, data in regions:
            got = libc.mmap(start, size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
            if got != start:
                os._exit(3)                          # the host process uses that address
            ctypes.memmove(start, data, size)
        for start, size, prot, _ in regions:
            host_prot = (PROT_READ if prot & 1 else 0) | (PROT_WRITE if prot & 2 else 0) | \
                (PROT_EXEC if prot & 4 else 0)
            libc.mprotect(start, size, host_prot)
        os.kill(os.getpid(), signal.SIGSTOP)
    finally:
        os._exit(4)                                  # not reached: the tracer ran the code


def run_on_host(layout: Layout, original: bytes, copy: bytes, start: int) -> Outcome:
    """The layout's state run from `start` on the host CPU, as Outcome (HostSkip when the host
    cannot run it)."""
    regions = _contents(layout, original, copy)
    pid = os.fork()
    if pid == 0:
        _child(regions)
    try:
        return _trace(pid, layout, regions, start)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def _trace(pid: int, layout: Layout, regions, start: int) -> Outcome:
    libc = _c()
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status):
        raise HostSkip("the host process already uses one of the layout's addresses"
                       if os.WEXITSTATUS(status) == 3 else f"child exited {os.WEXITSTATUS(status)}")
    regs = _Regs()
    if libc.ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(regs)) != 0:
        raise HostSkip(f"ptrace: {os.strerror(ctypes.get_errno())}")
    for name in _GPR64:
        setattr(regs, name, 0)
    for name, value in layout.regs.items():
        setattr(regs, "r" + name[1:] if layout.arch == "i386" else name, value)
    regs.rip = start
    regs.eflags = 0x202 | (layout.flags & 0xCD5)       # IF is always set in user mode
    if layout.arch == "i386":
        regs.cs, regs.ss, regs.ds, regs.es = USER32_CS, USER_DS, USER_DS, USER_DS
    if libc.ptrace(PTRACE_SETREGS, pid, None, ctypes.byref(regs)) != 0:
        raise HostSkip(f"ptrace SETREGS: {os.strerror(ctypes.get_errno())}")
    libc.ptrace(PTRACE_CONT, pid, None, None)
    _, status = os.waitpid(pid, 0)
    if not os.WIFSTOPPED(status):
        raise HostSkip(f"the child ended (status {status:#x}) instead of stopping")
    sig = os.WSTOPSIG(status)
    libc.ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(regs))
    info = _SigInfo()
    libc.ptrace(PTRACE_GETSIGINFO, pid, None, ctypes.byref(info))
    exit_ = _exit_of(sig, info, regs.rip)
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        memory = {}
        for s, n, _, _ in regions:
            mem.seek(s)
            memory[s] = mem.read(n)
    mask = 0xFFFF_FFFF if layout.arch == "i386" else (1 << 64) - 1
    names = [("e" + n[1:]) if layout.arch == "i386" else n for n in _GPR64[:8]] + \
        ([] if layout.arch == "i386" else list(_GPR64[8:]))
    gpr = {n: getattr(regs, "r" + n[1:] if layout.arch == "i386" else n) & mask for n in names}
    return Outcome(exit_, gpr, regs.eflags & 0xFFFF_FFFF, memory)


def _exit_of(sig: int, info: _SigInfo, rip: int) -> Exit:
    if sig == signal.SIGTRAP:
        return Exit(TRAP, rip, vector=3)
    if sig in (signal.SIGSEGV, signal.SIGBUS):
        fetch = info.addr == rip
        return Exit(FAULT, rip, address=info.addr, access=FETCH if fetch else None,
                    unmapped=info.code == SEGV_MAPERR)
    if sig == signal.SIGXCPU:
        return Exit(BUDGET, rip)                   # ran past its CPU limit: as Unicorn's budget
    if sig in _SIGNAL_VECTORS:
        return Exit(TRAP, rip, vector=_SIGNAL_VECTORS[sig])
    raise HostSkip(f"the host stopped with signal {signal.Signals(sig).name}")
