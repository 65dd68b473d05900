"""The backpatch engine (US 7,185,320, FIG. 3 item 360): make an instrumented address space run the
original program for a process the tool does not trace, and instrument it again afterwards.

Every strategy patches code through the debug interface, which keeps each space's sites with
their original bytes (kernel_model/debug/patches.py: int3s, LOCK prefixes, 5-byte jumps alike)
— the patent's breakpoint store and process-image store. Backpatching writes those bytes back and
records the list; re-inserting writes the patches of the list again. XOL pages (trampolines, return landings, native counters)
are left alone: without the patches nothing enters them.

Return addresses that uretprobes replaced by their landing (instrumenter/tracing/uretprobes.py) are patches
too, in the stack and in registers rather than in code: an untraced child gets the real ones
before it runs (`detach_returns`), and a vfork parent gets its landings back at vfork-done
(`reinsert_returns`), as it gets its code sites back.
"""


class BackpatchEngine:
    def __init__(self, session):
        self.session = session
        self.debug = session.debug

    def backpatch(self, process) -> list[int]:
        """Original bytes at every site of the space; returns the sites restored now."""
        return self.debug.backpatch(process)

    def reinsert(self, process) -> list[int]:
        return self.debug.reinsert_patches(process)

    def is_backpatched(self, process) -> bool:
        return self.debug.is_backpatched(process)

    def has_patches(self, process) -> bool:
        return self.debug.has_patches(process)

    def resume_address(self, process, trap_address: int) -> int:
        """Where a thread that trapped at `trap_address` resumes in the original code: the
        site itself, or for a jump site's int3 part (in the XOL page) the site it belongs to."""
        site = self.session.jumps.parts.get((process.space.serial, trap_address))
        return site.address if site is not None else trap_address

    def silent_sites(self, process) -> list[int]:
        """Jump sites whose jump leads to native code before any trap: a process running
        through them is never seen, so they cannot wait for a first hit to be backpatched."""
        space_id = process.space.serial
        return sorted(site.address for (sid, _), site in self.session.jumps.sites.items()
                      if sid == space_id and site.entry != site.python_part)

    def detach_returns(self, parent_thread, child) -> tuple[list[str], list[tuple[int, int]]]:
        """The untraced child `child` of `parent_thread` (not run yet) returns to the real
        addresses, never into the landing: (registers rewritten, stack slots restored)."""
        return self.session.returns.detach_child(parent_thread, child.threads[0])

    def reinsert_returns(self, parent, slots: list[tuple[int, int]]) -> list[int]:
        """The landings back into the parent's stack slots that `detach_returns` restored."""
        return self.session.returns.reinsert_slots(parent, slots)

    def clean_fork_child(self, parent, child, forking_thread) -> list[int]:
        """A detached fork child: its copy of the memory gets every original byte back, its
        pending uretprobe return addresses are the real ones again, and the tool forgets its
        space (handlers, stores, native counters) — it runs the program as if never probed."""
        cleaned = self.debug.remove_all_patches(child)     # the child's copy of the table
        if forking_thread is not None:
            self.session.returns.detach_child(forking_thread, child.threads[0])
        self.debug.clear_space(child.space)
        forget_space_tables(self.session, child.space)
        return cleaned


def forget_space_tables(session, space) -> None:
    """Every strategy forgets this space (instrumenter/strategies/base.py `forget`: their
    tables are keyed by space.serial), so that nothing of the tool refers to a space it no
    longer instruments; a jump site's native counts are collected first."""
    for strategy in session.strategies.built():
        strategy.forget(space)
