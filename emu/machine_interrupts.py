"""The Machine's interrupt hook (a part of emu/machine.py, whose module docstring describes the
callbacks): every int3 and `int n` comes through it, from Unicorn's UC_HOOK_INTR. It is the
Python hook (a raw ctypes callback: raw_hooks.py), or, once a tool registered an int3 site
for the C path, native/int3_sites.c in front of it, which takes those sites' int3s and hands it
everything else (int3_sites.py). The profiling timer's on_kernel_entry, which must see every
event first, is kept here too, since the C hook needs to know whether there is one.
"""
from unicorn import UC_HOOK_INTR

from . import exits
from .errata import CHAINING_VECTORS
from .errors import MachineError
from .internals.binding import HOOK_INTR_CFUNC
from .raw_hooks import add_raw_hook, hook_failed

# Vectors only an instruction can raise: int3 (#BP) and into (#OF); every vector >= 32 too, as
# Unicorn delivers no external interrupts. Others need a look at the CPU state (errata.py).
_ALWAYS_SOFTWARE = frozenset({3, 4})
# #DB: a trap after the instruction (single-step, data breakpoints), not a fault inside it
# (Intel SDM Vol. 3A, 17.3.1.2).
_DEBUG = 1


class MachineInterrupts:
    """The interrupt side of Machine (its state is made in Machine.__init__)."""

    @property
    def on_kernel_entry(self):
        """Called before any handler while a run is inside Unicorn (see __init__)."""
        return self._on_kernel_entry

    @on_kernel_entry.setter
    def on_kernel_entry(self, callback) -> None:
        self._on_kernel_entry = callback
        if self._int3_sites is not None:
            self._int3_sites.kernel_entry(callback is not None)

    def int3_sites(self, make: bool = True):
        """The int3 sites a C interrupt hook takes (int3_sites.py), made at the first call
        (with `make`: None until then); None where the C hook cannot be built or the CPU
        state's EIP is not located (the Python hook then takes every int3, as it always can)."""
        if self._int3_sites is None and make and self._direct:
            from . import int3_sites          # a run without int3 probes never loads it
            if int3_sites.available():
                self._int3_sites = int3_sites.Int3Sites(self, self._interrupt_hook)
                self._int3_sites.kernel_entry(self._on_kernel_entry is not None)
                self._publish_clock()
                if not self._running:       # else at the next run (Int3Sites.install)
                    self._int3_sites.install()
        return self._int3_sites

    def set_fast_interrupt(self, vector: int, handler) -> None:
        """Offer every `int vector` to `handler(vector)` before trap_handler: True, the guest
        goes on; False, the run ends with a TRAP exit for `vector`; None, trap_handler gets
        it as any other interrupt. Only software interrupts use vectors >= 32 (Unicorn
        delivers no external ones), so no CPU state needs reading to tell."""
        if vector < 32:
            raise MachineError(f"no fast path for exception vector {vector}")
        self._fast_vector, self._fast_interrupt = vector, handler

    def _add_raw_interrupt_hook(self):
        """The interrupt hook (a raw one: raw_hooks.py): every int3 probe hit and int 0x80
        passes here.

        An int3 is offered to `breakpoint_redirect` first. The IP it gives is stored straight
        into the CPU state: cpu_exec looks for the next block there as soon as this hook
        returns (cpu_state.py), with no exit from the CPU loop as uc_reg_write would ask."""
        uc = self.uc
        eip, pc_mask = self.cpu_state.eip, self._pc_mask

        def on_interrupt(_handle, vector, _user):
            try:
                if self._on_kernel_entry is not None:
                    self._on_kernel_entry()
                if vector == 3:
                    # #BP: an instruction always raises it and it never chains, so none of
                    # _on_interrupt's questions need asking (the path of every probe hit)
                    pc = eip.value & pc_mask
                    redirect = self.breakpoint_redirect
                    if redirect is not None:
                        ip = redirect(pc)
                        if ip is not None:
                            eip.value = ip
                            return
                    self.software_interrupt = True
                    if self.trap_handler is None or not self.trap_handler(3, pc):
                        self._finish(exits.Exit(exits.TRAP, eip.value & pc_mask, vector=3))
                elif vector == self._fast_vector and self._on_fast_interrupt(vector):
                    return
                else:
                    self._on_interrupt(uc, vector, None)
            except BaseException as error:        # noqa: B036 - re-raised by emu_start
                hook_failed(self.uc, error)

        return add_raw_hook(self.uc, UC_HOOK_INTR, HOOK_INTR_CFUNC, on_interrupt)

    def _on_fast_interrupt(self, vector: int) -> bool:
        """The fast path of `int vector` (set_fast_interrupt); False: not taken."""
        self.software_interrupt = True
        handled = self._fast_interrupt(vector)
        if handled is None:
            return False
        if not handled:
            self._finish(exits.Exit(exits.TRAP, self.raw_pc.read(), vector=vector))
        return True

    def _on_interrupt(self, uc, vector, _user):
        pc = self.raw_pc.read()
        self.software_interrupt = (vector >= 32 or vector in _ALWAYS_SOFTWARE
                                   or self._errata.is_software(vector, pc))
        if not self.software_interrupt and vector != _DEBUG:
            self._faulted_at(pc)
        handled = self.trap_handler(vector, pc) if self.trap_handler else False
        if vector in CHAINING_VECTORS:
            self._errata.fault_handled()
        if not handled:
            self._finish(exits.Exit(exits.TRAP, self.raw_pc.read(), vector=vector))
