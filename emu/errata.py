"""Corrections for Unicorn 2.1.4 behaviour that differs from the architecture (UNICORN_FACTS.md).

Kept here, behind the Machine, so that the layers above see architectural behaviour. One
erratum has a module of its own: without paging every page looks executable to Unicorn, which
sent every guest store down its slow path; tlb.py fills the TLB with each page's permissions.

Known and NOT corrected (it needs a change to Unicorn's translator, not a hook):
  cmpxchg8b/cmpxchg16b change only ZF (SDM Vol. 2A, CMPXCHG8B/CMPXCHG16B) and must keep the
  other status flags. QEMU's helpers compute those from env->cc_op, which translate.c does not
  bring up to date first (no gen_update_cc_op before gen_helper_cmpxchg*). When a code hook
  covers the instruction (Unicorn's instruction counter is one: trapline counts while probes
  are attached) and a flag-setting instruction precedes it in the same block, the helper reads
  the stale cc_op against the eflags image the hook path stored, and CF/OF/SF/AF/PF come out
  wrong (`imul rax, rax, 0; cmpxchg16b [m]` leaves CF=OF=1). ZF is always right, and code
  reads ZF after these instructions; tests/unit/emu/test_unicorn_errata.py shows the erratum
  so that an upgrade that fixes it is noticed.
"""
import ctypes

from unicorn import UC_ARCH_X86, UC_HOOK_INTR, Uc
from unicorn import x86_const as X

from .arch import Arch
from .errors import UnicornInternalsError

# Vectors that QEMU's check_exception treats as contributory or page faults (Intel SDM Vol. 3A,
# 6.15, Table 6-4: #DE, #TS, #NP, #SS, #GP are contributory; #PF is its own class). A fault of these
# kinds handled by a hook leaves env->old_exception set, so the *next* one would become #DF (8) and
# the one after that a silent triple-fault stop (UNICORN_FACTS.md item 6).
CHAINING_VECTORS = frozenset({0, 10, 11, 12, 13, 14})


class _UcContextHeader(ctypes.Structure):
    # unicorn include/uc_priv.h: struct uc_context, followed by the CPU state bytes.
    _fields_ = [("context_size", ctypes.c_size_t), ("mode", ctypes.c_int), ("arch", ctypes.c_int),
                ("snapshot_level", ctypes.c_int), ("ramblock_freed", ctypes.c_bool),
                ("last_block", ctypes.c_void_p), ("fv", ctypes.c_void_p)]


_old_exception_offset: dict[int, int] = {}


def _context_bytes(ctx) -> bytes:
    base = ctypes.cast(ctx.context, ctypes.c_void_p).value
    hdr = ctypes.sizeof(_UcContextHeader)
    return ctypes.string_at(base + hdr, ctx.size - hdr)


def _scratch_uc(arch: Arch, code: bytes) -> Uc:
    """A throw-away Uc with `code` at 0x1000 and a stack, for locating context fields."""
    uc = Uc(UC_ARCH_X86, arch.uc_mode)
    uc.mem_map(0x1000, 0x1000)
    uc.mem_write(0x1000, code)
    uc.reg_write(X.UC_X86_REG_ESP if arch.bits == 32 else X.UC_X86_REG_RSP, 0x1800)
    return uc


def _unique_slot(states: list[bytes], pattern: tuple[int, ...], what: str) -> int:
    """The offset of the one 4-byte slot whose values across `states` are `pattern`."""
    hits = [i for i in range(0, len(states[0]) - 3, 4)
            if tuple(int.from_bytes(st[i:i + 4], "little", signed=True) for st in states) == pattern]
    if len(hits) != 1:
        raise UnicornInternalsError(f"cannot locate {what} in the Unicorn context ({hits})")
    return hits[0] + ctypes.sizeof(_UcContextHeader)


def _context_int(uc: Uc, offset: int, value: int | None = None) -> int:
    """Read (and with `value`, write) one int of the CPU state through a saved context."""
    ctx = uc.context_save()
    field = ctypes.c_int.from_address(ctypes.cast(ctx.context, ctypes.c_void_p).value + offset)
    if value is not None:
        field.value = value
        uc.context_restore(ctx)
    return field.value


def _locate_old_exception(arch: Arch) -> int:
    """Find env->old_exception in the saved CPU state by diffing contexts around one #DE.

    Before any fault it holds -1; after a #DE caught by a hook it holds 0. Exactly one 4-byte
    slot changes that way; its position is stable for a given Unicorn build.
    """
    uc = _scratch_uc(arch, b"\x31\xc9\xf7\xf1\x90")      # xor ecx,ecx ; div ecx ; nop
    before = _context_bytes(uc.context_save())
    pc_reg = X.UC_X86_REG_EIP if arch.bits == 32 else X.UC_X86_REG_RIP

    def on_fault(uc_, intno, _):
        uc_.reg_write(pc_reg, 0x1004)
        uc_.emu_stop()
    uc.hook_add(UC_HOOK_INTR, on_fault)
    uc.emu_start(0x1000, 0x1005)
    return _unique_slot([before, _context_bytes(uc.context_save())], (-1, 0), "old_exception")


def clear_pending_exception(uc: Uc, arch: Arch) -> None:
    """Reset env->old_exception to -1, as QEMU's do_interrupt_all does after delivery."""
    off = _old_exception_offset.get(arch.bits)
    if off is None:
        off = _old_exception_offset[arch.bits] = _locate_old_exception(arch)
    _context_int(uc, off, -1)


# env->exception_is_int: 1 after `int n` / int3 / into, 0 after a CPU exception (QEMU's
# raise_interrupt2 sets it on every delivery). Unicorn reports both through the same INTR hook
# with nothing else to tell them apart, yet the architecture treats them differently: only a
# software interrupt is checked against the gate's DPL (Intel SDM Vol. 3A, 6.12.1.1).
_is_int_offset: dict[int, int] = {}


def _locate_exception_is_int(arch: Arch) -> int:
    """Find env->exception_is_int by diffing contexts: fresh (0), after `int 0x10` (1),
    after a #DE (0), after `int 0x11` (1). Exactly one 4-byte slot follows that pattern."""
    uc = _scratch_uc(arch, b"\xcd\x10\x90\x31\xc9\xf7\xf1\x90\xcd\x11\x90")
    states = [_context_bytes(uc.context_save())]

    def on_interrupt(uc_, intno, _):
        states.append(_context_bytes(uc_.context_save()))
        uc_.emu_stop()
    uc.hook_add(UC_HOOK_INTR, on_interrupt)
    for begin in (0x1000, 0x1003, 0x1008):          # int 0x10 ; xor+div (#DE) ; int 0x11
        uc.emu_start(begin, 0x1FFF)
    return _unique_slot(states, (0, 1, 0, 1), "exception_is_int")


def interrupt_is_software(uc: Uc, arch: Arch) -> bool:
    """True when the interrupt being delivered came from an INT n/INT3/INTO instruction."""
    off = _is_int_offset.get(arch.bits)
    if off is None:
        off = _is_int_offset[arch.bits] = _locate_exception_is_int(arch)
    return _context_int(uc, off) == 1
