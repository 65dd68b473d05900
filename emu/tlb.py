"""The page walker: Unicorn's TLB is filled with each page's own permissions (UC_TLB_VIRTUAL).

Why (erratum of Unicorn 2.1.4, read in its sources and seen in profiles):
  Unicorn runs x86 guests without paging. QEMU's x86 tlb_fill then gives every page
  PAGE_READ|PAGE_WRITE|PAGE_EXEC (target/i386/excp_helper.c, handle_mmu_fault: CR0.PG clear),
  so every TLB entry looks executable (accel/tcg/cputlb.c tlb_set_page_with_attrs sets
  addr_code). Unicorn's dirty tracking is stubbed (include/exec/ram_addr.h:
  cpu_physical_memory_is_clean is always true), so every writable entry starts TLB_NOTDIRTY,
  and Unicorn's notdirty_write clears that flag only for an entry with no code address and no
  memory hook covering the page (uc_mem_hook_installed). Neither ever held: every guest store
  took the slow path -- store_helper, two find_memory_mapping/flatview_translate lookups,
  notdirty_write -- instead of the fast path's one host store. An i386 program, which passes
  arguments and saves registers on the stack, paid it on every call: busybox `factor` spent most
  of its time there (far slower than the same applet on x86-64, whose hot loop keeps to
  registers).

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

from unicorn import (UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH, UC_ERR_OK, UC_HOOK_MEM_INVALID, UC_HOOK_TLB_FILL, UC_MEM_FETCH,
                     UC_MEM_READ_PROT, UC_MEM_READ_UNMAPPED, UC_MEM_WRITE, UC_MEM_WRITE_PROT,
                     UC_MEM_WRITE_UNMAPPED, UC_TLB_VIRTUAL, Uc, UcError)

from . import exits, internals
from .errors import MachineError
from .internals import uc_struct
from .internals.binding import (HOOK_MEM_INVALID_CFUNC, HOOK_TLB_FILL_CFUNC, handle,
                                keep_hook_exception, uc_hook_h, uclib)
from .memory import PROT_EXEC, PROT_READ, PROT_WRITE   # Unicorn's UC_PROT_* bits, one definition
from .raw_hooks import add_raw_hook

# FaultHooks: a refused data access -> (exits.READ/WRITE, unmapped); fetches end the run with
# their own error code, which the Machine reads.
_DATA_FAULTS = {UC_MEM_READ_UNMAPPED: (exits.READ, True), UC_MEM_WRITE_UNMAPPED: (exits.WRITE, True),
                UC_MEM_READ_PROT: (exits.READ, False), UC_MEM_WRITE_PROT: (exits.WRITE, False)}


def page_walker(uc: Uc, perms_at, on_fault, *, bits: int):
    """The Machine's source of memory faults: a PageWalker where Unicorn's invalid_addr is
    located (internals/uc_struct.py), else FaultHooks, with the same two methods' meaning."""
    offset = internals.located().invalid_addr
    if offset is None:
        return FaultHooks(uc, on_fault, bits=bits)
    return PageWalker(uc, perms_at, on_fault, uc_struct.view(uc, offset), bits=bits)


class PageWalker:
    """Fills `uc`'s TLB from `perms_at(page) -> perms | None` (None: not mapped) and reports a
    refused read or write as `on_fault(access, unmapped)`, access one of exits.READ/WRITE.
    Unicorn has synced the guest PC to the faulting instruction when on_fault runs; the exact
    address is `fault_address()` once emu_start has returned.

    `bits` is the width of a linear address. Outside 64-bit mode it is 32 bits and wraps
    (Intel SDM Vol. 3A, 3.3.1): QEMU's jcc leaves bits above 31 in env->eip (machine.py), and
    its own tlb_fill drops them (excp_helper.c, "we can only address 32bits"); so does this one.
    """

    def __init__(self, uc: Uc, perms_at, on_fault, invalid_addr: ctypes.c_uint64, *, bits: int):
        self._invalid_addr = invalid_addr
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
                keep_hook_exception(uc, error)
                return False

        callback = HOOK_TLB_FILL_CFUNC(on_fill)
        hook = uc_hook_h()
        status = uclib.uc_hook_add(handle(uc), ctypes.byref(hook), UC_HOOK_TLB_FILL, callback,
                                   None, ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status != UC_ERR_OK:
            raise MachineError(f"cannot add the TLB fill hook: {UcError(status)}")
        return callback


class FaultHooks:
    """The fallback of the PageWalker where uc->invalid_addr is not located: Unicorn's TLB as
    it comes (every page RWX to the TLB), Unicorn's own permission checks against its regions
    (Memory keeps them with uc_mem_protect), and UC_HOOK_MEM_*_UNMAPPED/_PROT hooks, whose
    callbacks are given the exact address. Correct, and slower: with such a hook covering every
    page no store is ever made inline again (the erratum the PageWalker exists for)."""

    def __init__(self, uc: Uc, on_fault, *, bits: int):
        self._address = 0
        mask = (1 << bits) - 1

        def on_invalid(_handle, access, address, _size, _value, _user):
            try:
                self._address = address & mask
                fault = _DATA_FAULTS.get(access)
                if fault is not None:
                    on_fault(*fault)
                if access == UC_MEM_READ_PROT:
                    # the refused read has already filled a TLB entry (readable: no paging),
                    # and Unicorn checks read permission only on its slow path: drop it, or
                    # the next read of the page would go through inline
                    uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)
            except BaseException as error:            # noqa: B036 - re-raised by emu_start
                keep_hook_exception(uc, error)
            return False                               # not handled: the run ends

        self._callback = add_raw_hook(uc, UC_HOOK_MEM_INVALID, HOOK_MEM_INVALID_CFUNC, on_invalid)

    def fault_address(self) -> int:
        return self._address
