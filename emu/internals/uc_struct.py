"""Two fields of Unicorn's `struct uc_struct` (include/uc_priv.h) that no API shows, located by
diffing snapshots of the struct around known events (it is a few KB from the handle uc._uch):

  emu_counter    instructions counted by Unicorn's internal hook (uc.c hook_count_cb) in the
                 current emu_start; reset by every emu_start; counts only when emu_start is
                 given a count. The virtual time of traces (icount.py).
  invalid_addr   the exact address of the access that ended a run with a memory error (the TLB
                 fill hook sees only its page: softmmu/unicorn_vtlb.c). The si_addr of a
                 fault (tlb.py).

An offset is None where no single slot shows the expected history; icount.py and tlb.py then
take their fallbacks. Snapshots are read through /proc/self/mem (procmem.py): the struct may
be smaller than the bytes scanned, and a read past it must read nothing, not crash. Only a
confirmed offset is ever read directly (view()).
"""
import ctypes
import os

from unicorn import UC_ARCH_X86, UC_MODE_64, Uc, UcError
from unicorn import x86_const as X

from . import procmem
from .binding import handle

_SCAN_BYTES = 16384          # struct uc_struct is a few KB more than this (mostly its hook lists)
_CODE = 0x1000
_LOOP = b"\x48\xff\xc0\xeb\xfb"                  # 0x1000: inc rax ; jmp 0x1000
_LOAD = b"\x8b\x01"                              # 0x1010: mov eax, [rcx]
_BUDGETS = (4_321, 8_765, 333)
_ADDRESSES = (0x1234_5678, 0x9ABC_DEF1, 0x0BAD_F00D)


def locate() -> tuple[int | None, int | None]:
    """(offset of uc->emu_counter, offset of uc->invalid_addr), each None unless found.

    emu_counter: after a run stopped by a budget of K instructions it holds K + 1 (the hook
    counts the next instruction, sees K + 1 > K and stops before it runs), and emu_count, the
    next field, holds K: three budgets leave exactly one 8-byte slot with that history.
    invalid_addr: three reads of unmapped addresses leave exactly one slot holding each in turn.
    """
    uc = _scratch_uc()
    counted, faulted = _history(uc, _BUDGETS, _ADDRESSES)
    counter = _unique([[(k + 1, k) for k in _BUDGETS]], counted, pairs=True)
    invalid = _unique([_ADDRESSES], faulted, pairs=False)
    return _confirm_on(uc, counter, invalid)


def confirm(counter: int | None, invalid: int | None) -> tuple[int | None, int | None]:
    """The offsets that a fresh Uc confirms (a run of 55 instructions counted as 56; the
    address of an unmapped read), others None. locate() asks the same of its own Uc."""
    return _confirm_on(_scratch_uc(), counter, invalid)


def _confirm_on(uc: Uc, counter: int | None, invalid: int | None) -> tuple[int | None, int | None]:
    (counted,), (faulted,) = _history(uc, (55,), (0x5EED_0ACE,))
    ok_counter = _fits(counter) and _words(counted)[counter // 8] == 56
    ok_invalid = _fits(invalid) and _words(faulted)[invalid // 8] == 0x5EED_0ACE
    return counter if ok_counter else None, invalid if ok_invalid else None


def view(uc: Uc, offset: int) -> ctypes.c_uint64:
    """A live view of the 8-byte field at `offset` of `uc`'s uc_struct."""
    return ctypes.c_uint64.from_address(handle(uc).value + offset)


def _scratch_uc() -> Uc:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(_CODE, 0x1000)
    uc.mem_write(_CODE, _LOOP)
    uc.mem_write(_CODE + 0x10, _LOAD)
    return uc


def _history(uc: Uc, budgets, addresses) -> tuple[list[bytes], list[bytes]]:
    """Snapshots of `uc`'s uc_struct after a budgeted run of the loop for each budget, then
    after an unmapped read of each address."""
    counted, faulted = [], []
    for budget in budgets:
        uc.emu_start(_CODE, 0, 0, budget)
        counted.append(_snapshot(uc))
    for address in addresses:
        uc.reg_write(X.UC_X86_REG_RCX, address)
        try:
            uc.emu_start(_CODE + 0x10, _CODE + 0x12)
        except UcError:
            pass
        faulted.append(_snapshot(uc))
    return counted, faulted


def _unique(expected, snapshots: list[bytes], *, pairs: bool) -> int | None:
    """The byte offset of the one 8-byte slot whose values across `snapshots` are expected[0]
    (with `pairs`: the slot and the next one hold each pair); None unless exactly one."""
    patterns = [b"".join(v.to_bytes(8, "little") for v in (value if pairs else (value,)))
                for value in expected[0]]
    first, hits = snapshots[0], []
    at = first.find(patterns[0])
    while at >= 0:
        if at % 8 == 0 and all(s[at:at + len(p)] == p for s, p in zip(snapshots, patterns)):
            hits.append(at)
        at = first.find(patterns[0], at + 1)
    return hits[0] if len(hits) == 1 else None


def _words(snapshot: bytes):
    return memoryview(snapshot[:len(snapshot) // 8 * 8]).cast("Q")


def _fits(offset: int | None) -> bool:
    return offset is not None and 0 <= offset <= _SCAN_BYTES - 8 and offset % 8 == 0


def _snapshot(uc: Uc) -> bytes:
    fd = procmem.open_self()
    try:
        return procmem.read(fd, handle(uc).value, _SCAN_BYTES)
    finally:
        os.close(fd)
