"""ustack and uaddr: the guest's user stack, unwound by the profiler's unwinder (instrumenter/
profiler/unwind.py: CFI, frame pointers, signal frames), and the addresses of its symbols.

A stack prints as bpftrace prints one (src/output.cpp get_stack with its indent of 8): a new
line, then each frame as `function+offset` (decimal) on a line of its own, indented.
"""
from .errors import RuntimeActionError

INDENT = " " * 8
MAX_FRAMES = 127            # bpftrace's default ustack depth


class Stacks:
    def __init__(self, debug):
        self.debug = debug
        self._unwinder = None

    def frames(self, hit, limit: int) -> tuple[int, ...]:
        if hit.thread is None:
            return ()
        if self._unwinder is None:
            from instrumenter.profiler.unwind import Unwinder
            self._unwinder = Unwinder(self.debug)
        debug, thread, process = self.debug, hit.thread, hit.process
        arch = debug.arch(process)
        # the hit's thread is the one running (a probe's hook, a syscall stop): its registers
        # are the CPU view's
        registers = dict(debug.cpu(process).registers().gpr)
        # At a uprobe's hit the thread may be in the tool's code (a trampoline, a jump's
        # landing) with the guest's registers: the frame is the probed instruction's.
        entry = hit.address if hit.retval is None else 0       # a uretprobe's is the function's
        registers[arch.pc] = entry or debug.read_register(thread, arch.pc)
        stack = self._unwinder.unwind(process, registers, max_depth=limit or MAX_FRAMES, tid=thread.tid)
        return stack.frames[:limit or MAX_FRAMES]

    def ustack(self, hit, limit: int) -> str:
        frames = self.frames(hit, limit)
        return "\n" + "".join(f"{INDENT}{self.frame_text(hit.process, pc)}\n" for pc in frames)

    def frame_text(self, process, pc: int) -> str:
        """A frame as bpftrace's ustack shows it: `function+offset` in decimal, the bare
        address where no symbol covers it (src/bpftrace.cpp resolve_usym)."""
        image = self.debug.image_at(process, pc)
        symbol = image.symbols.function_at(pc) if image is not None else None
        if symbol is None:
            return f"{pc:#x}"
        return f"{symbol.name}+{pc - symbol.addr}"

    def uaddr(self, hit, name, node) -> int:
        """The address of symbol `name` in the objects the hit's process maps (the program
        first, then ld.so and the libraries in address order)."""
        for mapped in self.debug.images(hit.process) if hit.process is not None else ():
            image = mapped.image
            symbol = image.symbols.lookup(name) if image is not None else None
            if symbol is not None:
                return symbol.addr
        raise RuntimeActionError(node, f"uaddr: no symbol {name!r} in the process")
