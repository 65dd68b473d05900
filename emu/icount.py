"""Exact guest instruction counts: the virtual time of traces (issue 4: "timestamps are virtual
instruction counts").

Unicorn counts instructions only when `emu_start` is given a count: it then installs an internal
C code hook (uc.c `hook_count_cb`) that increments `uc->emu_counter` before every instruction and
stops the run when it passes `uc->emu_count`. The counter is reset at every `emu_start` and is
not part of the API, so its place in `struct uc_struct` is located once per process by running a
scratch Uc with three different budgets (the same diffing technique errata.py uses for CPU
state). Reading it is one ctypes load, so a probe hit inside a hook sees the exact count at
that instruction, not a count rounded to a scheduler slice.

Cost: the counting hook makes translated code call a helper per instruction (~1.6-1.8x slower
on fib, measured on this machine), so a Machine counts only once a tool asks it to
(`Machine.count_instructions`).

What is counted: every instruction the CPU began, including the int3 of a probe, the
instructions of trampolines and native actions, and an instruction that faulted (its hook ran
before the fault). The count is deterministic: the same run counts the same instructions.
"""
import ctypes

from unicorn import UC_ARCH_X86, UC_MODE_64, Uc

from .errors import UnicornInternalsError

# A count that never runs out: Unicorn takes a size_t, and counting needs count > 0.
UNLIMITED = 1 << 62
_SCAN_BYTES = 16384          # struct uc_struct is a few KB; the counter sits near its middle

_counter_offset: int | None = None


def _locate_counter() -> int:
    """The byte offset of uc->emu_counter in struct uc_struct.

    After a run stopped by a budget of K instructions the counter holds K + 1 (the hook counts
    the next instruction, sees K + 1 > K and stops before it runs) and emu_count, the next
    field, holds K. Three budgets leave exactly one 8-byte slot with that history.
    """
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(0x1000, 0x1000)
    uc.mem_write(0x1000, b"\x48\xff\xc0\xeb\xfb")          # 1: inc rax ; jmp 1b
    budgets = (1_234_567, 7_654_321, 333)
    snapshots = []
    for budget in budgets:
        uc.emu_start(0x1000, 0, 0, budget)
        snapshots.append(ctypes.string_at(uc._uch.value, _SCAN_BYTES))
    hits = [offset for offset in range(0, _SCAN_BYTES - 16, 8)
            if all(int.from_bytes(s[offset:offset + 8], "little") == k + 1
                   and int.from_bytes(s[offset + 8:offset + 16], "little") == k
                   for s, k in zip(snapshots, budgets))]
    if len(hits) != 1:
        raise UnicornInternalsError(f"cannot locate Unicorn's instruction counter ({hits})")
    return hits[0]


def counter_of(uc: Uc) -> ctypes.c_uint64:
    """A live view of `uc`'s instruction counter for the current emu_start."""
    global _counter_offset
    if _counter_offset is None:
        _counter_offset = _locate_counter()
    return ctypes.c_uint64.from_address(uc._uch.value + _counter_offset)


class InstructionClock:
    """Instructions executed so far, shared by every Machine of one run (a forked child's
    Machine joins its parent's clock), so that timestamps of all processes are one order.

    `total` holds the instructions of finished `run()` slices; the Machine that is running
    adds its live counter when asked inside a hook.
    """

    def __init__(self) -> None:
        self.total = 0
