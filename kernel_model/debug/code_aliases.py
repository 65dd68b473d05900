"""Code breakpoints carried into a tool's copies of the program's code (US 6,957,421:
"debugging breakpoints that are carried from the block of original code or are inserted into
the block of instrumented code during debugging"). Part of the debug interface
(kernel_model/debug/), one of its parts.

A tool that runs an original instruction at another address (a relocated function's copy,
instrumenter/strategies/relocate/) registers that address as an *alias* of the original:

  register_code_alias(space, relocated, original)
  unregister_code_aliases(space, [relocated, ...])       the copy is freed

A code breakpoint (run.py add_code_breakpoint) at `original` then also stops a thread
before it runs `relocated` — whether the breakpoint or the copy came first — and its `on_hit`
is told the ORIGINAL address, so a debugger sees one breakpoint, hit wherever the instruction
runs; `code_alias_original` answers the same for a thread stopped at an alias.

  pass_code_alias_once(thread, relocated)
      the tool's own trap at `original` (the int3 that sends a thread from the original code
      into its copy) moves the thread to `relocated`: a breakpoint at `original` had its
      chance before the int3 ran, so the alias lets the thread through this once (the
      instruction has not run yet, and one original instruction makes one stop).
"""


class CodeAliases:
    _code_aliases: dict | None = None     # space.serial -> {relocated: original}
    _alias_passes: dict | None = None     # (space.serial, tid) -> the alias it passes once

    def __init__(self, code_breakpoints):
        self._code_breakpoints = code_breakpoints    # SpaceHooks shared with run.py, which adds them

    def register_code_alias(self, space, relocated: int, original: int) -> None:
        if self._code_aliases is None:
            self._code_aliases = {}
        self._code_aliases.setdefault(space.serial, {})[relocated] = original
        breakpoints = self._code_breakpoints.get(space)
        if breakpoints is not None and original in breakpoints:
            breakpoints.add(relocated)

    def unregister_code_aliases(self, space, addresses) -> None:
        aliases = (self._code_aliases or {}).get(space.serial)
        if not aliases:
            return
        breakpoints = self._code_breakpoints.get(space)
        for relocated in addresses:
            original = aliases.pop(relocated, None)
            if original is not None and breakpoints is not None and relocated in breakpoints:
                breakpoints.remove(relocated)

    def code_alias_original(self, space, address: int) -> int:
        """The original address `address` runs (itself when it is no alias)."""
        aliases = (self._code_aliases or {}).get(space.serial)
        return aliases.get(address, address) if aliases else address

    def pass_code_alias_once(self, thread, relocated: int) -> None:
        space = thread.process.space
        breakpoints = self._code_breakpoints.get(space)
        if breakpoints is None or relocated not in breakpoints:
            return                              # nothing would stop it there
        if self._alias_passes is None:
            self._alias_passes = {}
        self._alias_passes[(space.serial, thread.tid)] = relocated

    def code_alias_passes(self, thread, address: int) -> bool:
        """Whether `thread` goes through the alias at `address` this once. A pass is for the
        thread's very next instruction: its next stop check, wherever, uses it up."""
        passes = self._alias_passes
        if not passes or thread is None:
            return False
        return passes.pop((thread.process.space.serial, thread.tid), None) == address

    def code_aliases_of(self, space, original: int) -> list[int]:
        aliases = (self._code_aliases or {}).get(space.serial)
        return sorted(r for r, o in aliases.items() if o == original) if aliases else []

    def copy_code_aliases(self, parent_space, child_space) -> None:
        """fork: the child's memory holds the same copies."""
        aliases = (self._code_aliases or {}).get(parent_space.serial)
        if aliases:
            self._code_aliases[child_space.serial] = dict(aliases)

    def forget_code_aliases(self, space) -> None:
        if self._code_aliases:
            self._code_aliases.pop(space.serial, None)
        if self._alias_passes:
            for key in [k for k in self._alias_passes if k[0] == space.serial]:
                del self._alias_passes[key]
