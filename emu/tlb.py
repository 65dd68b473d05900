"""The page walker: Unicorn's TLB is filled with each page's own permissions (UC_TLB_VIRTUAL).

Why (erratum of Unicorn 2.1.4, read in its sources and measured on this machine):
  Unicorn runs x86 guests without paging. QEMU's x86 tlb_fill then gives every page
  PAGE_READ|PAGE_WRITE|PAGE_EXEC (target/i386/excp_helper.c, handle_mmu_fault: CR0.PG clear),
  so every TLB entry looks executable (accel/tcg/cputlb.c tlb_set_page_with_attrs sets
  addr_code). Unicorn's dirty tracking is stubbed (include/exec/ram_addr.h:
  cpu_physical_memory_is_clean is always true), so every writable entry starts TLB_NOTDIRTY,
  and Unicorn's notdirty_write clears that flag only for an entry with no code address and no
  memory hook covering the page (uc_mem_hook_installed). Neither ever held: every guest store
  took the slow path -- store_helper, two find_memory_mapping/flatview_translate lookups,
  notdirty_write -- about 28 ns instead of 2 ns. An i386 program, which passes arguments and
  saves registers on the stack, paid it on every call: busybox `factor` spent 80 % of its time
  there (~25x slower than the same applet on x86-64, whose hot loop keeps to registers).

The remedy is what an MMU does (Intel SDM Vol. 3A, 4.10.2: a TLB entry caches the page's
access rights): Unicorn asks this walker on every TLB miss, and the entry gets the page's
permissions. A data page then has no code address, the first store clears TLB_NOTDIRTY, and
the following stores run inline. Executable pages keep it, so a store into code still drops
its translations (self-modifying code, notdirty_write -> tb_invalidate_phys_page_fast). For
the same reason the Machine installs no UC_HOOK_MEM_* hook at all: a read or write the page's
permissions refuse is a fault found here, like a #PF found by the page walk.

Instruction fetches are always granted (with PROT_EXEC added to the entry): Unicorn checks
UC_PROT_EXEC and the mapping itself on every code load it translates (cputlb.c load_helper,
code_read) and reports UC_ERR_FETCH_PROT/UNMAPPED; and refusing one would break two internal
lookups that fill the TLB as a fetch -- ctl_remove_cache (translate-all.c uc_invalidate_tb)
and the end-address invalidation at the end of every emu_start (softmmu/cpus.c) -- whose
refusal sets uc->invalid_error and ends the run in progress.
"""
import ctypes

from unicorn import (UC_ARCH_X86, UC_ERR_OK, UC_HOOK_TLB_FILL, UC_MEM_FETCH, UC_MEM_WRITE,
                     UC_MODE_32, UC_TLB_VIRTUAL, Uc, UcError)
from unicorn import x86_const as X
from unicorn.unicorn_py3.unicorn import HOOK_TLB_FILL_CFUNC, uc_hook_h, uclib

from . import exits
from .errors import MachineError, UnicornInternalsError
from .memory import PROT_EXEC, PROT_READ, PROT_WRITE   # Unicorn's UC_PROT_* bits, one definition
_SCAN_BYTES = 16384                                  # struct uc_struct is a few KB (icount.py)

_invalid_addr_offset: int | None = None


def _locate_invalid_addr() -> int:
    """The byte offset of uc->invalid_addr in struct uc_struct.

    Unicorn stores there the address of the access that ended a run with a memory error (the
    exact address, not its page) and never exposes it. Three reads of unmapped addresses leave
    exactly one 8-byte slot holding each address in turn (the diffing technique of icount.py).
    """
    uc = Uc(UC_ARCH_X86, UC_MODE_32)
    uc.mem_map(0x1000, 0x1000)
    uc.mem_write(0x1000, b"\x8b\x01")                 # mov eax, [ecx]
    addresses = (0x1234_5678, 0x9ABC_DEF1, 0x0BAD_F00D)
    snapshots = []
    for address in addresses:
        uc.reg_write(X.UC_X86_REG_ECX, address)
        try:
            uc.emu_start(0x1000, 0x1002)
        except UcError:
            pass
        snapshots.append(ctypes.string_at(uc._uch.value, _SCAN_BYTES))
    hits = [offset for offset in range(0, _SCAN_BYTES - 8, 8)
            if all(int.from_bytes(s[offset:offset + 8], "little") == a
                   for s, a in zip(snapshots, addresses))]
    if len(hits) != 1:
        raise UnicornInternalsError(f"cannot locate Unicorn's invalid_addr ({hits})")
    return hits[0]


def _invalid_addr_of(uc: Uc) -> ctypes.c_uint64:
    global _invalid_addr_offset
    if _invalid_addr_offset is None:
        _invalid_addr_offset = _locate_invalid_addr()
    return ctypes.c_uint64.from_address(uc._uch.value + _invalid_addr_offset)


class PageWalker:
    """Fills `uc`'s TLB from `perms_at(page) -> perms | None` (None: not mapped) and reports a
    refused read or write as `on_fault(access, unmapped)`, access one of exits.READ/WRITE.
    Unicorn has synced the guest PC to the faulting instruction when on_fault runs; the exact
    address is `fault_address()` once emu_start has returned.

    `bits` is the width of a linear address. Outside 64-bit mode it is 32 bits and wraps
    (Intel SDM Vol. 3A, 3.3.1): QEMU's jcc leaves bits above 31 in env->eip (machine.py), and
    its own tlb_fill drops them (excp_helper.c, "we can only address 32bits"); so does this one.
    """

    def __init__(self, uc: Uc, perms_at, on_fault, *, bits: int):
        self._invalid_addr = _invalid_addr_of(uc)
        uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)
        mask = (1 << bits) - 1
        self._callback = self._add_raw_fill_hook(uc, perms_at, on_fault, mask)   # kept referenced

    def fault_address(self) -> int:
        return self._invalid_addr.value

    @staticmethod
    def _add_raw_fill_hook(uc: Uc, perms_at, on_fault, mask: int):
        """A bare ctypes callback, as the Machine's interrupt hook (the binding's wrapper
        costs more than the lookup); exceptions are handed to emu_start as the binding does."""

        def on_fill(_handle, page, access, entry, _user):
            try:
                page &= mask
                perms = perms_at(page)
                if access == UC_MEM_FETCH:
                    perms = (perms or 0) | PROT_EXEC
                else:
                    need, kind = (PROT_WRITE, exits.WRITE) if access == UC_MEM_WRITE \
                        else (PROT_READ, exits.READ)
                    if perms is None or not perms & need:
                        on_fault(kind, perms is None)
                        return False
                entry.contents.paddr = page           # Unicorn's physical = virtual
                entry.contents.perms = perms
                return True
            except BaseException as error:            # noqa: B036 - re-raised by emu_start
                if uc._hook_exception is None:
                    uc._hook_exception = error
                uclib.uc_emu_stop(uc._uch)
                return False

        callback = HOOK_TLB_FILL_CFUNC(on_fill)
        handle = uc_hook_h()
        status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_TLB_FILL, callback,
                                   None, ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status != UC_ERR_OK:
            raise MachineError(f"cannot add the TLB fill hook: {UcError(status)}")
        return callback
