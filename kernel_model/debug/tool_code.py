"""Code a tool put into a process (trampolines calling user handlers, US 9,336,001): where it is,
so that a fault inside it is reported as the tool's and never blamed on the program. Part of
the debug interface (kernel_model/debug/), one of its parts.

A tool registers a range of a space with a namer, `name(ip) -> str | None`: for a fault at ip
it says whose code faulted ("handler of uprobe:fib:fib faulted at handler+0x12"), or None when
the instruction there is the program's own (a relocated copy of the probed instruction). The
kernel asks `tool_code_fault` before it turns a CPU exception into a signal
(kernel_model/user_faults.py): a tool's fault kills the process with that name and goes to no
signal handler of the program, which would see a PC in code it never had.
"""


class ToolCode:
    _tool_code: dict | None = None         # space.serial -> {start: (end, namer)}

    def register_tool_code(self, space, start: int, end: int, namer) -> None:
        if self._tool_code is None:
            self._tool_code = {}
        self._tool_code.setdefault(space.serial, {})[start] = (end, namer)

    def unregister_tool_code(self, space, start: int) -> None:
        ranges = (self._tool_code or {}).get(space.serial)
        if ranges is not None:
            ranges.pop(start, None)
            if not ranges:
                del self._tool_code[space.serial]

    def forget_tool_code(self, space) -> None:
        if self._tool_code:
            self._tool_code.pop(space.serial, None)

    def tool_code_fault(self, process, ip: int) -> str | None:
        """Whose fault a CPU exception at `ip` in `process` is, when the tool's code raised it."""
        ranges = (self._tool_code or {}).get(process.space.serial) if process.space else None
        if not ranges:
            return None
        for start, (end, namer) in ranges.items():
            if start <= ip < end:
                return namer(ip)
        return None
