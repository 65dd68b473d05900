"""The one interface of a probe strategy (issue 15; docs/ARCHITECTURE.md "One strategy registry").

Every strategy of the registry (registry.py) is a ProbeStrategy:
  place(process, address, hook, owner) -> site   put `hook` on the instruction at `address`,
        patching the code through the debug interface (kernel_model/debug/patches.py); raises
        InstrumenterError with a one-line reason when it cannot take the site, and then has
        patched nothing;
  remove(process, address, hook, owner)          take the hook off; the last one restores the
        original bytes exactly;
  refusal(process, address) -> str | None        why `place` would refuse the site, asked
        without patching anything (None: it would take it);
  original_return(process, address) -> int | None   a return address that points into this
        strategy's code (a relocated return point) -> the original return address it stands
        for; None for any other address (the detacher rewrites stacks with it: US 7,017,153);
  fork(parent, child), forget(space)              the kernel's fork and space-released events:
        the child's memory is a copy (patches, XOL pages) so the strategy's tables get the same
        entries for the child's space; a released (or cleaned) space's entries go.
  address_source() -> object | None               where the strategy runs program code at
        other addresses (a relocated function's copy), an object with
        `lookup(process, address) -> ToolLocation | None` that ToolAddressMap
        (instrumenter/debugger/addrmap.py) asks; None (the default) when it has none.
The registry's entry says what a hit costs (`hit_cost`), which orders `auto`.

The tables named in `tables` are SpaceTables (space_table.py): fork and forget are done for
all of them here, so no strategy rewrites those loops; a strategy with more to do on a fork
(a breakpoint redirect per child site, copied data pages) extends `fork`.
"""
from ..errors import InstrumenterError
from .space_table import SpaceTable


class ProbeStrategy:
    tables: tuple[str, ...] = ("sites",)

    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        for name in self.tables:
            setattr(self, name, SpaceTable())

    def place(self, process, address: int, hook, owner):
        raise NotImplementedError

    def remove(self, process, address: int, hook, owner) -> None:
        raise NotImplementedError

    def check(self, process, address: int) -> None:
        """Raise the InstrumenterError `place` would raise for a new site at `address`;
        patch nothing."""
        raise NotImplementedError

    def refusal(self, process, address: int) -> str | None:
        try:
            self.check(process, address)
        except InstrumenterError as refused:
            return str(refused)
        return None

    def original_return(self, process, address: int) -> int | None:
        return None

    def address_source(self):
        return None

    def stale_points(self, process) -> dict[int, int]:
        """Exact points of this strategy's own tool code in `process` -> the original address
        each stands for (instrumenter/tracing/detach_stale.py: a pointer the program kept into
        the pages a detach unmaps faults there and is translated)."""
        return {}

    def fork(self, parent, child) -> None:
        for name in self.tables:
            getattr(self, name).fork(parent.space, child.space)

    def forget(self, space) -> None:
        for name in self.tables:
            getattr(self, name).forget(space)


def take_hook_off(site, hook, owner: str, address: int) -> bool:
    """Remove one probe's hook from a site that keeps Python hooks in `site.hooks` and native
    actions as (hook, slot, owner) in `site.natives` (trampoline and relocate sites); a probe
    not there is a one-line error. True when it was a native action (the page changes)."""
    natives = [n for n in site.natives if n[0] is hook] if site is not None else []
    if site is None or (hook not in site.hooks and not natives):
        raise InstrumenterError(f"no probe {owner} at {address:#x}")
    if natives:
        site.natives.remove(natives[0])
    else:
        site.hooks.remove(hook)
    return bool(natives)

