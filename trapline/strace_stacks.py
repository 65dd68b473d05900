"""strace -k: the stack of each traced call, from the profiler's unwinder (instrumenter/profiler/
unwind.py: CFI, frame pointers, signal frames), one ` > object(function+0xoff) [0xoffset]` line
per frame as strace -k prints them: the function holding the address (the nearest one before it
when the symbol has no size, as hand-written assembly's), and the address as an offset in the
object's file (the PT_LOAD that maps it: address - p_vaddr + p_offset).

The frame of the call itself is the address after its `syscall` / `int 0x80` (both 2 bytes), where
Linux leaves the IP: the door shows the instruction's own address inside the call.
Outside trapline/strace/, which reaches the kernel only through the door's plain tables and
memory peeks: the one strace feature that needs the instrumenter, imported only with -k.
"""
import bisect

from emu.registers import gpr_names
from instrumenter.profiler.unwind import Unwinder

SYSCALL_INSN_LEN = 2


def stack_printer(debug):
    """A function of a thread stopped at a syscall's exit: its stack as strace -k's lines."""
    unwinder = Unwinder(debug)
    starts: dict[str, tuple[list[int], list]] = {}

    def lines(thread, in_call: bool = True) -> list[str]:
        """`in_call` False: the thread has not entered a call (a new image at its entry)."""
        process = thread.process
        arch = debug.arch(process)
        registers = {name: debug.read_register(thread, name) for name in gpr_names(arch)}
        registers[arch.pc] = debug.read_register(thread, arch.pc)
        stack = unwinder.unwind(process, registers, tid=thread.tid)
        frames = list(stack.frames)
        if frames and in_call:
            frames[0] += SYSCALL_INSN_LEN
        shown = [f" > {_frame(debug, process, pc, starts, caller=index > 0)}"
                 for index, pc in enumerate(frames)]
        if stack.truncated and frames:
            shown.append(" > unexpected_backtracing_error [0x0]")
        return shown
    return lines


def _frame(debug, process, pc: int, starts, caller: bool) -> str:
    """A caller's frame is named by its call instruction (the byte before the return address,
    which may be the next function's first), as strace's libdw lookup does."""
    site = pc - 1 if caller else pc
    image = debug.image_at(process, site)
    if image is None:
        return f"?() [{pc:#x}]"
    symbol = image.symbols.function_at(site) or _preceding(image, site, starts)
    where = f"{symbol.name}+{pc - symbol.addr:#x}" if symbol is not None else ""
    segment = next((s for s in image.segments if s.vaddr <= pc < s.vaddr + s.memsz), None)
    offset = pc - segment.vaddr + segment.offset if segment is not None else pc - image.load_bias
    return f"{image.path}({where}) [{offset:#x}]"


def _preceding(image, pc: int, starts):
    """The function starting nearest before `pc` (assembly routines have no size)."""
    known = starts.get(image.path)
    if known is None:
        functions = sorted(image.symbols.functions(), key=lambda s: s.addr)
        known = starts[image.path] = ([s.addr for s in functions], functions)
    addresses, functions = known
    index = bisect.bisect_right(addresses, pc) - 1
    return functions[index] if index >= 0 else None
