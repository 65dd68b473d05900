"""Code breakpoints: stop the CPU before the instruction at an address, without patching it.

A debugger's breakpoint must coexist with a tool's patches (US 6,957,421: debugging
breakpoints in instrumented code): an int3 of its own at a probed address would have to share
the probe's byte, and a jump-patched site has no byte of its own at all. So a debugger
breakpoint is a code hook ranged to exactly its address (free until hit: docs/unicorn.md
"never-hit ranged hooks cost nothing"), as the LOCK-prefix sites are (lock_sites.py), and the
program's bytes are never touched: reads show them as they are.

The hook runs before the instruction. `on_hit(address) -> bool`: True ends the run with a
STOPPED exit before the instruction executes (`emu_stop` in a code hook skips the hooked
instruction, docs/unicorn.md item 8: the PC stays at `address`); False lets it run (a
thread resuming from the breakpoint it stopped at). Translations of the address are dropped
when a hook is added, so code translated before sees it.
"""
from unicorn import UC_HOOK_CODE

from . import exits


class CodeBreakpoints:
    def __init__(self, machine, on_hit):
        self.machine = machine
        self.on_hit = on_hit
        self._hooks: dict[int, int] = {}        # address -> code hook handle

    def add(self, address: int) -> None:
        if address in self._hooks:
            return
        machine = self.machine
        uc = machine.uc
        self._hooks[address] = uc.hook_add(UC_HOOK_CODE, self._on_site, None, address, address)
        machine.exact_count_users.add(self)     # a stop inside a block (lazy_count.py)
        # Unicorn runs an instruction's code hooks in the order they were added: a LOCK-prefix
        # site's hook (lock_sites.py) would emulate the instruction before this one could stop
        # in front of it, so such a site's hook is added again, after this one.
        lock_sites = machine.lock_sites
        if lock_sites.is_trapped(address):
            lock_sites.untrap(address)
            lock_sites.trap(address)
        uc.ctl_remove_cache(address, address + 1)

    def remove(self, address: int) -> None:
        hook = self._hooks.pop(address, None)
        if hook is not None and not self.machine.closed:
            self.machine.uc.hook_del(hook)
        if not self._hooks:
            self.machine.exact_count_users.discard(self)

    def clear(self) -> None:
        for address in list(self._hooks):
            self.remove(address)

    def __contains__(self, address: int) -> bool:
        return address in self._hooks

    def addresses(self) -> list[int]:
        return sorted(self._hooks)

    def _on_site(self, _uc, address, _size, _user):
        if address not in self._hooks or not self.on_hit(address):
            return
        machine = self.machine
        # The counting hook already counted this instruction, which will not run now: take
        # it back so that the virtual time of a debugged run is the undebugged run's.
        if machine._count_hook:
            machine._insns.value -= 1
        machine._finish(exits.Exit(exits.STOPPED, address))
