"""Who called: the caller of a function, from the return address its entry hook sees.

Seed 004 [0178]: "If it obtains control at the entry then the call stack will have the return
address at a known displacement" — at a function's first instruction that is [sp] on x86 (the
call pushed it; System V psABIs, i386 2.2.2 and AMD64 3.2.2). The caller is the function whose
code holds the call, looked up at return address - 1 (a call may be its function's last
instruction, as gdb's backtrace reasons).

"If the code is badly behaved it is possible that the caller may be incorrect. However even in
this case the caller of the caller will most likely be identified": the instruction before the
return address is checked. A direct call to another function means the callee was reached by a
tail call (jmp) from that one, whose frame is gone, so the function found is the caller's
caller; no call at all before it means the word is not a return address the psABI promises.
Both are reported as uncertain, with the reason, never silently.
"""
from __future__ import annotations

import bisect
import struct

from ..errors import DecodeError
from ..insn.decode import decode
from .callers import FunctionId

CALL_LENGTHS = (5, 2, 3, 6, 7, 4)       # e8 rel32 first; then ff /2 forms by their ModRM size


def function_at(door, process, address: int) -> FunctionId | None:
    """The function whose code holds `address` in `process` (its image map now), or None."""
    images = door.images(process)
    i = bisect.bisect_right([m.base for m in images], address) - 1
    if i < 0 or address >= images[i].end or images[i].image is None:
        return None
    mapped = images[i]
    symbol = mapped.image.symbols.function_at(address)
    if symbol is None:
        return None
    return FunctionId(mapped.name, symbol.name, symbol.addr)


def place_name(door, process, address: int) -> str:
    """`address` as "module+0xoff" (the object it is in, as stack reports name stripped code),
    or hex outside every object."""
    for mapped in door.images(process):
        if mapped.base <= address < mapped.end:
            return f"{mapped.name}+{address - mapped.base:#x}"
    return f"{address:#x}"


def return_address_at_entry(door, process) -> tuple[int, int]:
    """(sp, [sp]) of the thread stopped at a function's first instruction."""
    cpu = door.cpu(process)
    word = cpu.arch.word
    sp = cpu.sp
    return sp, struct.unpack("<I" if word == 4 else "<Q", cpu.read(sp, word))[0]


def identify_caller(door, process, return_address: int,
                    callee: FunctionId) -> tuple[FunctionId | None, str | None]:
    """(caller, why it is uncertain or None) for a call of `callee` returning to
    `return_address`."""
    caller = function_at(door, process, return_address - 1)
    call = _call_before(door, process, return_address)
    if call is None:
        return caller, f"no call before the return address {return_address:#x}"
    target = call.branch_target
    if target is not None and target != callee.entry:
        via = function_at(door, process, target)
        if via is not None and via.entry == target and via != callee:
            return caller, f"{via.name} tail-called it (the call at {call.address:#x} goes there)"
    return caller, None


def _call_before(door, process, return_address: int):
    """The call instruction that ends at `return_address`, or None."""
    arch = door.arch(process).name
    cpu = door.cpu(process)
    for length in CALL_LENGTHS:
        if not cpu.is_mapped(return_address - length, length):
            continue                    # not code of this process: no call of that length
        code = door.read_memory(process, return_address - length, length)
        try:
            insn = decode(code, return_address - length, arch)
        except DecodeError:
            continue
        if insn.length == length and "call" in insn.groups:
            return insn
    return None
