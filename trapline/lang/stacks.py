"""ustack and uaddr: the guest's user stack, unwound by the profiler's unwinder (instrumenter/
profiler/unwind.py: CFI, frame pointers, signal frames), and the addresses of its symbols.

A stack prints as bpftrace prints one (src/output.cpp get_stack with its indent of 8): a new
line, then each frame as `function+offset` (decimal) on a line of its own, indented.
"""
from .errors import RuntimeActionError

INDENT = " " * 8
MAX_FRAMES = 127            # bpftrace's default ustack depth


class Stacks:
    def __init__(self, debug, returns=None):
        self.debug = debug
        # the tracing session's uretprobe returns (instrumenter/tracing/uretprobes.py): a
        # return address it swapped for its landing is read as the real one (LandingFixup)
        self.returns = returns
        self._unwinder = None

    def frames(self, hit, limit: int) -> tuple[int, ...]:
        if hit.thread is None:
            return ()
        if self._unwinder is None:
            from instrumenter.profiler.hooks import LandingFixup
            from instrumenter.profiler.unwind import Unwinder
            fixup = LandingFixup(self.debug, self.returns) if self.returns is not None else None
            self._unwinder = Unwinder(self.debug, fixup=fixup)
        debug, thread, process = self.debug, hit.thread, hit.process
        arch = debug.arch(process)
        # the hit's thread is the one running (a probe's hook, a syscall stop): its registers
        # are the CPU view's
        registers = dict(debug.cpu(process).registers().gpr)
        # At a uprobe's hit the thread may be in the tool's code (a trampoline, a jump's
        # landing) with the guest's registers: the frame is the probed instruction's.
        # A syscall tracepoint, a timed or an event probe (address 0) stops the thread in its
        # own code: its IP is the user frame (after the syscall instruction; the instruction
        # the timer interrupted), as bpftrace's ustack shows there.
        if hit.retval is not None and hit.address:
            registers[arch.pc] = self._returned_to(process, thread, registers[arch.sp], arch)
        elif hit.address:
            registers[arch.pc] = hit.address
        else:
            registers[arch.pc] = debug.read_register(thread, arch.pc)
        stack = self._unwinder.unwind(process, registers, max_depth=limit or MAX_FRAMES, tid=thread.tid)
        return stack.frames[:limit or MAX_FRAMES]

    def _returned_to(self, process, thread, sp: int, arch) -> int:
        """Where a uretprobe's function returned to: its first frame is the caller's, as
        Linux's handle_trampoline (kernel/events/uprobes.c) sets the registers' IP to the
        original return address before the handlers run. The thread stands on (just past)
        the tool's return landing; the return has popped its slot, which the tool has given its original
        word back (uretprobes.py unwind_chain): that word. Elsewhere (a strategy that hits at
        the return address itself) the IP already is it."""
        pc = self.debug.read_register(thread, arch.pc)
        # the landing is an int3, a trap: the IP is the byte after it (SDM Vol. 3A, 6.5)
        if self.returns is None or not any(self.returns.is_landing(process, at) for at in (pc, pc - 1)):
            return pc
        word = arch.bits // 8
        return int.from_bytes(self.debug.read_memory(process, sp - word, word), "little")

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
