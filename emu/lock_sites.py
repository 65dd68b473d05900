"""LOCK-prefix probe sites: a 0xf0 byte that raises #UD as a real CPU does (erratum:
docs/unicorn.md item 5).

A tool patches a LOCK prefix over a probed instruction so that the bytes there form an invalid
LOCK use (US 7,350,196, DTrace's FBT `f0 89 e5`), but Unicorn runs a LOCK-prefixed mov as a plain
mov. So each such site gets a code hook ranged to exactly its address (free until hit; one per
site, as there are few). Arm it BEFORE writing the patch: the write drops the translations of
the site, and the re-translation picks the hook up.
"""
from unicorn import UC_HOOK_CODE

from . import exits

LOCK = b"\xf0"
UD = 6


class LockSites:
    def __init__(self, machine):
        self.machine = machine
        self._hooks: dict[int, int] = {}        # address -> code hook

    def trap(self, address: int) -> None:
        if address not in self._hooks:
            self._hooks[address] = self.machine.uc.hook_add(UC_HOOK_CODE, self._on_site, None,
                                                            address, address)
            self.machine.exact_count_users.add(self)     # a #UD inside a block (lazy_count.py)

    def untrap(self, address: int) -> None:
        hook = self._hooks.pop(address, None)
        if hook is not None:
            self.machine.uc.hook_del(hook)   # effective at the end of the current block at worst
        if not self._hooks:
            self.machine.exact_count_users.discard(self)

    def is_trapped(self, address: int) -> bool:
        return address in self._hooks

    def clear(self) -> None:
        for address in list(self._hooks):
            self.untrap(address)

    def _on_site(self, uc, address, _size, _user):
        """The code hook runs before the instruction at `address`. While the byte there is
        still the LOCK patch, deliver #UD: a fault, so the saved IP is `address` itself (Intel
        SDM Vol. 3A, 6.15 "Interrupt 6"). Then:
          - the handler moved the IP (it emulated the instruction): writing PC inside a code
            hook makes Unicorn resume there; the patched instruction itself never runs;
          - the handler took the patch out and left the IP here: write the PC again, which
            restarts translation at `address`, so the ORIGINAL bytes run (never the stale
            block translated with 0xf0);
          - unhandled, or the patch is still there with the IP unmoved: end the run with a
            TRAP exit. `emu_stop` in a code hook skips the hooked instruction
            (docs/unicorn.md item 8), which is what a fault needs: PC stays at `address`.
        """
        m = self.machine
        if address not in self._hooks or m.mem.read(address, 1) != LOCK:
            return                       # the patch is gone: run whatever is there
        m.software_interrupt = False
        if m.on_kernel_entry is not None:
            m.on_kernel_entry()
        handled = m.trap_handler(UD, address) if m.trap_handler else False
        if handled and m.raw_pc.read() != address:
            return
        if handled and m.mem.read(address, 1) != LOCK:
            m.raw_pc.write(address)
            return
        m._finish(exits.Exit(exits.TRAP, address, vector=UD))
