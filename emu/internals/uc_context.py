"""Unicorn's saved context (include/uc_priv.h `struct uc_context`): a header, then a copy of
the CPU state `CPUX86State env` from its start. Two fields of `env` that no API shows are read
and written through a saved context, located by diffing contexts around known events:

  old_exception     QEMU's "exception in flight" (target/i386/cpu.h): a fault handled by a hook
                    is never delivered, so it stays set and the next contributory fault becomes
                    #DF (docs/unicorn.md item 6); errata.py resets it to -1 as QEMU's
                    x86_cpu_do_interrupt does after a delivery.
  exception_is_int  1 after `int n`/int3/into, 0 after a CPU exception (raise_interrupt2): the
                    one way to tell them apart in the interrupt hook (errata.py).

Each is an int at a fixed offset for a given Unicorn build and mode; None where no single slot
follows the expected pattern (then errata.py takes its fallback).
"""
import ctypes

from unicorn import UC_ARCH_X86, UC_HOOK_INTR, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X


class _UcContextHeader(ctypes.Structure):
    # unicorn include/uc_priv.h: struct uc_context, followed by the CPU state bytes.
    _fields_ = [("context_size", ctypes.c_size_t), ("mode", ctypes.c_int), ("arch", ctypes.c_int),
                ("snapshot_level", ctypes.c_int), ("ramblock_freed", ctypes.c_bool),
                ("last_block", ctypes.c_void_p), ("fv", ctypes.c_void_p)]


HEADER = ctypes.sizeof(_UcContextHeader)
_MODES = {32: UC_MODE_32, 64: UC_MODE_64}


def context_bytes(ctx) -> bytes:
    """The CPU state bytes of a saved context (UcContext), without the header."""
    base = ctypes.cast(ctx.context, ctypes.c_void_p).value
    return ctypes.string_at(base + HEADER, ctx.size - HEADER)


def context_int(uc: Uc, offset: int, value: int | None = None) -> int:
    """Read (and with `value`, write) the int at `offset` of `uc`'s CPU state (an offset from
    the context's start, header included) through a saved context."""
    ctx = uc.context_save()
    field = ctypes.c_int.from_address(ctypes.cast(ctx.context, ctypes.c_void_p).value + offset)
    if value is not None:
        field.value = value
        uc.context_restore(ctx)
    return field.value


def fits(uc: Uc, offset: int | None) -> bool:
    """Whether an int at `offset` lies inside the CPU state of `uc`'s saved contexts."""
    return offset is not None and offset % 4 == 0 \
        and HEADER <= offset <= uc.context_save().size - 4


# int 0x10 ; nop ; xor ecx, ecx ; div ecx (#DE) ; nop ; int 0x11 ; nop
_CODE = b"\xcd\x10\x90\x31\xc9\xf7\xf1\x90\xcd\x11\x90"
_INT_10, _DIVIDE, _INT_11, _AFTER_DIVIDE = 0x1000, 0x1003, 0x1008, 0x1007


def locate(bits: int) -> tuple[int | None, int | None]:
    """(offset of old_exception, offset of exception_is_int) in a context of that mode, each
    None unless exactly one 4-byte slot follows its pattern over: a fresh CPU, `int 0x10`, a
    #DE caught by a hook, `int 0x11`. old_exception: -1, -1, 0, 0 (set by the fault and never
    reset; a software interrupt does not touch it). exception_is_int: 0, 1, 0, 1."""
    uc, seen = _scratch_uc(bits)
    states = [context_bytes(uc.context_save())]
    for begin in (_INT_10, _DIVIDE, _INT_11):
        uc.emu_start(begin, 0x1FFF)
        states.append(context_bytes(uc.context_save()))
    old_exception, is_int = _unique_slot(states, (-1, -1, 0, 0)), _unique_slot(states, (0, 1, 0, 1))
    if fits(uc, old_exception):
        context_int(uc, old_exception, -1)        # as errata.py does after a handled fault
    seen.clear()
    return _confirm_on(uc, seen, old_exception, is_int)


def confirm(bits: int, old_exception: int | None,
            is_int: int | None) -> tuple[int | None, int | None]:
    """The offsets a fresh Uc confirms, others None. old_exception: a #DE caught by a hook
    sets it to 0, and resetting it to -1 makes the next #DE arrive as #DE, where it arrives
    as #DF (8) without the reset. exception_is_int: 0 in the hook of a #DE, 1 in that of
    `int 0x11`. locate() asks the same of its own Uc."""
    return _confirm_on(*_scratch_uc(bits), old_exception, is_int)


def _confirm_on(uc: Uc, seen: list[int], old_exception: int | None,
                is_int: int | None) -> tuple[int | None, int | None]:
    old_ok, is_int_ok = fits(uc, old_exception), fits(uc, is_int)
    probes = []

    def probe(uc_):
        probes.append((context_int(uc_, old_exception) if old_ok else None,
                       context_int(uc_, is_int) if is_int_ok else None))
        if old_ok:
            context_int(uc_, old_exception, -1)
    for begin in (_DIVIDE, _DIVIDE, _INT_11):
        try:
            uc.emu_start(begin, 0x1FFF)
        except Exception:                   # noqa: BLE001 - a wrong offset may break the CPU
            return None, None
        probe(uc)
    old_ok = old_ok and seen == [0, 0, 0x11] and [p[0] for p in probes[:2]] == [0, 0]
    is_int_ok = is_int_ok and [p[1] for p in probes] == [0, 0, 1]
    return old_exception if old_ok else None, is_int if is_int_ok else None


def _scratch_uc(bits: int) -> tuple[Uc, list[int]]:
    """A throw-away Uc with _CODE at 0x1000 and a stack; its INTR hook records each vector,
    moves a faulting #DE past its `div` and stops the run."""
    uc = Uc(UC_ARCH_X86, _MODES[bits])
    uc.mem_map(0x1000, 0x1000)
    uc.mem_write(0x1000, _CODE)
    uc.reg_write(X.UC_X86_REG_ESP if bits == 32 else X.UC_X86_REG_RSP, 0x1800)
    pc_reg = X.UC_X86_REG_EIP if bits == 32 else X.UC_X86_REG_RIP
    seen = []

    def on_interrupt(uc_, intno, _user):
        seen.append(intno)
        if intno in (0, 8):
            uc_.reg_write(pc_reg, _AFTER_DIVIDE)
        uc_.emu_stop()
    uc.hook_add(UC_HOOK_INTR, on_interrupt)
    return uc, seen


def _unique_slot(states: list[bytes], pattern: tuple[int, ...]) -> int | None:
    """The offset (header included) of the one 4-byte slot whose values across `states` are
    `pattern`; None unless exactly one."""
    size = min(len(state) for state in states) // 4 * 4
    views = [memoryview(state[:size]).cast("i") for state in states]
    hits = [i for i, values in enumerate(zip(*views)) if values == pattern]
    return 4 * hits[0] + HEADER if len(hits) == 1 else None
