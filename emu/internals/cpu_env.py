"""Where a Uc's CPU state lives: the `CPUX86State env` of its X86CPU, for direct views of EIP/RIP,
the general registers and the CS selector (emu/cpu_state.py).

Where (Unicorn 2.1.4, include/uc_priv.h and qemu/target/i386/cpu.h): `struct uc_struct` holds
`CPUState *cpu`; the CPU is an `X86CPU`, whose `env` follows its CPUState at a fixed distance;
in `env`, `regs[16]` come first (QEMU's order: R_EAX, R_ECX, R_EDX, R_EBX, R_ESP, R_EBP, R_ESI,
R_EDI, then r8-r15), then `eip`, and later the segment caches (`segs[R_CS].selector`).

How it is found: uc_context_save copies `env` from its start (uc_context.py), so the offsets of
eip and of the CS selector show in a saved context. The pointer to `env` is found once per host
process: every word of uc_struct that reads as an address is followed to see whether a scratch
CPU's known register values sit near it, and a candidate is kept only if it follows changes made
through the API and holds for fresh Ucs of both modes, before and after other values are
written into them. Each new Uc is confirmed again with a mark put into RAX (env_of). Memory is only ever probed through /proc/self/mem (procmem.py),
where a wrong guess reads nothing instead of crashing.
"""
import os
import struct
from dataclasses import dataclass

from unicorn import UC_ARCH_X86, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X

from . import procmem
from .binding import handle, is_64
from .uc_context import context_bytes

_UC_STRUCT_SCAN = 4096          # uc_struct's `cpu` pointer sits in its first few hundred bytes
_CPU_SCAN = 1 << 17             # env lies within the X86CPU, some tens of KB after its start
_RAX, _RIP, _CS = 0x5A17_C0DE_0BAD_F00D, 0x0000_7EAD_BEEF_1230, 0x1237
_RAX2, _RIP2 = 0x0123_4567_89AB_CDEF, 0x0000_1111_2222_3330
# QEMU's regs[] order (target/i386/cpu.h R_EAX..R_EDI, then r8-r15); uc.reg_read's names.
GPR_ORDER = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
             "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
GPR32_ORDER = ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi")
_FRESH = ((UC_MODE_64, 0x4D0D_E640_0000_0001, 0x0000_6464_0000_1000),
          (UC_MODE_32, 0x3232_0001, 0x3232_1000))


@dataclass(frozen=True)
class EnvLayout:
    cpu_pointer: int        # offset of `cpu` in uc_struct
    env_distance: int       # from the CPU object to its `env`
    eip_offset: int         # of `eip` in env
    cs_offset: int          # of segs[R_CS].selector in env


def locate() -> EnvLayout | None:
    """The layout, found and confirmed with scratch Ucs; None where it cannot be (or no
    /proc)."""
    try:
        return _locate()
    except OSError:
        return None


def confirm(layout: EnvLayout) -> bool:
    """Whether `layout` holds for a fresh Uc of each mode (a mark through the API shows)."""
    try:
        fd = procmem.open_self()
    except OSError:
        return False
    try:
        fresh = [_fresh_uc(mode, ax ^ 0x5A5A, ip + 0x40) for mode, ax, ip in _FRESH]
        return all(_holds(fd, uc, (layout.cpu_pointer, layout.env_distance), layout.eip_offset,
                          ax, ip) for uc, ax, ip in fresh)
    finally:
        os.close(fd)


def env_of(uc: Uc, layout: EnvLayout) -> int | None:
    """The address of `uc`'s env under `layout`, confirmed for this Uc with a mark put into
    RAX through the API (read through /proc/self/mem); None if the mark does not show."""
    uc.reg_read(X.UC_X86_REG_CS)            # Unicorn creates its CPU on the first API use
    try:
        fd = procmem.open_self()
    except OSError:
        return None
    try:
        cpu = int.from_bytes(procmem.read(fd, handle(uc).value + layout.cpu_pointer, 8)
                             or bytes(8), "little")
        env = cpu + layout.env_distance
        return env if _is_env_of(fd, uc, env) else None
    finally:
        os.close(fd)


def _is_env_of(fd: int, uc: Uc, env: int) -> bool:
    rax = X.UC_X86_REG_RAX if is_64(uc) else X.UC_X86_REG_EAX
    saved = uc.reg_read(rax)
    size = 8 if is_64(uc) else 4          # a 32-bit write sets the low half (WRITE_DWORD)
    mark = _RAX2 & ((1 << 8 * size) - 1)
    uc.reg_write(rax, mark)
    try:
        return procmem.read(fd, env, size) == mark.to_bytes(size, "little")
    finally:
        uc.reg_write(rax, saved)


def _locate() -> EnvLayout | None:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    marks = {name: 0x7700_0000_0000_0000 + i for i, name in enumerate(GPR_ORDER)}
    for name, mark in marks.items():
        uc.reg_write(getattr(X, f"UC_X86_REG_{name.upper()}"), mark)
    order = context_bytes(uc.context_save())[:8 * len(GPR_ORDER)]
    if order != b"".join(struct.pack("<Q", mark) for mark in marks.values()):
        return None                            # regs[] is not where, or in the order, expected
    uc.reg_write(X.UC_X86_REG_RAX, _RAX)
    uc.reg_write(X.UC_X86_REG_RIP, _RIP)
    uc.reg_write(X.UC_X86_REG_CS, _CS)        # 64-bit mode stores the selector as given
    state = context_bytes(uc.context_save())
    eip_offset = _unique(state, struct.pack("<Q", _RIP), 8)
    cs_offset = _unique(state, struct.pack("<I", _CS), 4)
    if eip_offset is None or cs_offset is None:
        return None
    fd = procmem.open_self()
    try:
        # Other pointers of uc_struct may happen to lie at a fixed distance from this Uc's env
        # (neighbours on the heap); only `cpu` keeps it for every new Uc, of both modes, and
        # follows other values written into those (what confirm() asks of two more). The
        # first candidate, in uc_struct's order, that passes is the answer, so the scan stops
        # there (`cpu` sits in uc_struct's first few hundred bytes; each word scanned reads
        # _CPU_SCAN bytes: the whole scan was most of a start-up's locating).
        fresh = [_fresh_uc(mode, ax, ip) for mode, ax, ip in _FRESH]
        found = next((c for c in _env_candidates(fd, uc, eip_offset)
                      if _is_general(fd, uc, c, eip_offset, fresh)), None)
    finally:
        os.close(fd)
    if found is None:
        return None
    cpu_pointer, env_distance = found
    return EnvLayout(cpu_pointer, env_distance, eip_offset, cs_offset)


def _is_general(fd: int, uc: Uc, candidate: tuple[int, int], eip_offset: int, fresh) -> bool:
    """The candidate follows a change made to the scratch Uc through the API (which is then
    put back for the scan to go on) and holds for the fresh Ucs."""
    uc.reg_write(X.UC_X86_REG_RAX, _RAX2)
    uc.reg_write(X.UC_X86_REG_RIP, _RIP2)
    try:
        if not _holds(fd, uc, candidate, eip_offset, _RAX2, _RIP2):
            return False
    finally:
        uc.reg_write(X.UC_X86_REG_RAX, _RAX)
        uc.reg_write(X.UC_X86_REG_RIP, _RIP)
    return all(_holds(fd, u, candidate, eip_offset, ax, ip) for u, ax, ip in fresh) \
        and all(_holds_other(fd, u, candidate, eip_offset, ax, ip) for u, ax, ip in fresh)


def _holds_other(fd: int, uc: Uc, candidate: tuple[int, int], eip_offset: int, ax: int,
                 ip: int) -> bool:
    """_holds after other values are written into `uc` through the API."""
    ax, ip = ax ^ 0x5A5A, ip + 0x40
    _write(uc, ax, ip)
    return _holds(fd, uc, candidate, eip_offset, ax, ip)


def _write(uc: Uc, ax: int, ip: int) -> None:
    uc.reg_write(X.UC_X86_REG_RAX if is_64(uc) else X.UC_X86_REG_EAX, ax)
    uc.reg_write(X.UC_X86_REG_RIP if is_64(uc) else X.UC_X86_REG_EIP, ip)


def _fresh_uc(mode: int, ax: int, ip: int) -> tuple[Uc, int, int]:
    uc = Uc(UC_ARCH_X86, mode)
    _write(uc, ax, ip)
    return uc, ax, ip


def _unique(state: bytes, pattern: bytes, align: int) -> int | None:
    hits = [i for i in range(0, len(state) - len(pattern) + 1, align)
            if state[i:i + len(pattern)] == pattern]
    return hits[0] if len(hits) == 1 else None


def _env_candidates(fd: int, uc: Uc, eip_offset: int):
    """(offset of a pointer in uc_struct, distance from its target to an `env` holding the
    scratch values), in that order: every word of uc_struct that reads as an address is
    tried, when the caller asks for the next candidate."""
    head = procmem.read(fd, handle(uc).value, _UC_STRUCT_SCAN)
    rax = struct.pack("<Q", _RAX)
    for offset in range(0, len(head) - 7, 8):
        target = struct.unpack_from("<Q", head, offset)[0]
        if target < 0x10000 or target >= 1 << 47 or target % 8:
            continue
        block = procmem.read(fd, target, _CPU_SCAN)
        at = block.find(rax)
        while at >= 0:
            rip_there = block[at + eip_offset:at + eip_offset + 8]
            if at % 8 == 0 and rip_there == struct.pack("<Q", _RIP):
                yield offset, at
            at = block.find(rax, at + 1)


def _holds(fd: int, uc: Uc, candidate: tuple[int, int], eip_offset: int, ax: int,
           ip: int) -> bool:
    cpu_pointer, env_distance = candidate
    cpu = int.from_bytes(procmem.read(fd, handle(uc).value + cpu_pointer, 8) or bytes(8), "little")
    env = procmem.read(fd, cpu + env_distance, eip_offset + 8)
    return len(env) == eip_offset + 8 and env[:8] == struct.pack("<Q", ax) \
        and env[eip_offset:] == struct.pack("<Q", ip)
