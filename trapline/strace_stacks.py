"""strace -k: the stack of each traced call, from the profiler's unwinder (instrumenter/profiler/
unwind.py: CFI, frame pointers, signal frames), one ` > object(function+0xoff) [0xoffset]` line
per frame as strace -k prints them: the function holding the address (the nearest one before it
when the symbol has no size, as hand-written assembly's), and the address as an offset in the
object's file (the PT_LOAD that maps it: address - p_vaddr + p_offset).

The frame of the call itself is the address after its `syscall` / `int 0x80` (both 2 bytes), where
Linux leaves the IP: the door shows the instruction's own address inside the call.
Where there is no CFI and the profiler's unwinder stops (it never guesses: a hand-written
assembly routine such as musl's __set_thread_area), strace's libdw guesses on as elfutils'
backends do (backends/x86_64_unwind.c, i386_unwind.c: "There was no CFI. Maybe we happen to
have a frame pointer"): the return address at [bp + word], the caller's bp at [bp], its sp at
bp + 2 words; a zero bp, or a word that cannot be read, ends the stack there. The guess skips
the frame whose pointer the routine did not set up (its caller's caller comes next), as
strace's lines do. It is made where the walk stops at its first frame, whose registers are
known; a walk that stops deeper keeps strace's `unexpected_backtracing_error` mark.

Outside trapline/strace/, which reaches the kernel only through the door's plain tables and
memory peeks: the one strace feature that needs the instrumenter, imported only with -k.
"""
import bisect

from emu.registers import gpr_names
from instrumenter.profiler.unwind import Unwinder

SYSCALL_INSN_LEN = 2
MAX_GUESSES = 64


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
        for _ in range(MAX_GUESSES):
            if not (stack.truncated and len(stack.frames) == 1):
                break
            registers = _frame_pointer_guess(debug, process, arch, registers)
            if registers is None:
                stack = stack._replace(truncated=None)     # libdw's stack ends there
                break
            stack = unwinder.unwind(process, registers, tid=thread.tid)
            frames += stack.frames
        if frames and in_call:
            frames[0] += SYSCALL_INSN_LEN
        shown = [f" > {_frame(debug, process, pc, starts, caller=index > 0)}"
                 for index, pc in enumerate(frames)]
        if stack.truncated and frames:
            shown.append(" > unexpected_backtracing_error [0x0]")
        return shown
    return lines


def _frame_pointer_guess(debug, process, arch, registers: dict) -> dict | None:
    """The caller's registers by the frame-pointer chain, as libdw's fallback takes them (the
    other registers as they are); None where that ends: a zero or unreadable frame pointer, or
    a zero return address."""
    bp_name, word = arch.sp[0] + "bp", arch.word
    bp = registers.get(bp_name)
    if not bp:
        return None
    saved = debug.peek(process, bp, 2 * word)
    if saved is None or len(saved) < 2 * word:
        return None
    caller_bp = int.from_bytes(saved[:word], "little")
    ret = int.from_bytes(saved[word:], "little")
    if not ret:
        return None
    return {**registers, bp_name: caller_bp, arch.sp: bp + 2 * word, arch.pc: ret}


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
