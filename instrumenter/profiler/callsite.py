"""Who called: the caller of a function, from the return address its entry hook sees.

US 7,823,129 [0178]: "If it obtains control at the entry then the call stack will have the return
address at a known displacement" — at a function's first instruction that is [sp] on x86 (the
call pushed it; System V psABIs, i386 2.2.2 and AMD64 3.2.2). The caller is the function whose
code holds the call, looked up at return address - 1 (a call may be its function's last
instruction, as gdb's backtrace reasons): its symbol, or in stripped code the `.eh_frame` FDE
that covers it (Functions), so that a stripped caller is hooked and walked up like a named one.

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

from loader.cfi import CallFrameTable, CfiUnsupported

from ..errors import DecodeError
from ..insn.decode import decode
from .callers import FunctionId
from .start_code import main_of
from .unwind import Unwinder

CALL_LENGTHS = (5, 2, 3, 6, 7, 4)       # e8 rel32 first; then ff /2 forms by their ModRM size


class Functions:
    """The functions of the objects mapped in a process, found by address: the function symbol
    that covers it, else — in stripped code — the `.eh_frame` FDE that does (loader/cfi.py
    fde_range). The compiler emits one FDE per function, from its first instruction to its
    end, so its initial location is where the function starts, as gdb and perf find it
    in code without symbols; such a function is named "module+0xOFF" from its start, as
    stack reports name stripped code (symbolize.py), except the program's main, which its
    `_start` names (start_code.py). An FDE whose first row is not a called
    function's entry — the CFA not sp + one word, the return address not at [sp] (psABI:
    i386 2.2.2, AMD64 3.2.2), as in the PLT's FDE — covers no function.

    `tables(image)` gives an object's CFI table: by default an unwinder's, which keeps each
    table once read (pass the sampler's `unwinder.table_for` to share the tables it read)."""

    def __init__(self, door, tables=None):
        self.door = door
        self.table = tables if tables is not None else Unwinder(door).table_for
        self._mains: dict[int, int | None] = {}      # space serial -> main's address

    def at(self, process, address: int) -> FunctionId | None:
        """The function whose code holds `address` in `process` (its image map now), or None
        where neither a symbol nor an FDE says."""
        mapped = object_at(self.door.images(process), address)
        if mapped is None or mapped.image is None:
            return None
        symbol = mapped.image.symbols.function_at(address)
        if symbol is not None:
            return FunctionId(mapped.name, symbol.name, symbol.addr)
        return self.by_fde(process, mapped, address)

    def by_fde(self, process, mapped, address: int) -> FunctionId | None:
        """The function the FDE covering `address` in `mapped` (an image-map entry) bounds."""
        table = self.table(mapped.image)
        bounds = table.fde_range(address)
        if bounds is None or not _called_entry(table, bounds[0], mapped.image.bits // 8):
            return None
        if bounds[0] == self._main(process):
            return FunctionId(mapped.name, "main", bounds[0])    # what _start hands libc
        return FunctionId(mapped.name, offset_name(mapped, bounds[0]), bounds[0])

    def _main(self, process) -> int | None:
        """The stripped program's main (start_code.py), found once per address space."""
        space = getattr(process, "space", None)
        if space is None:
            return main_of(self.door, process)          # (a stand-in process of the tests)
        key = space.serial
        if key not in self._mains:
            self._mains[key] = main_of(self.door, process)
        return self._mains[key]


def _called_entry(table: CallFrameTable, start: int, word: int) -> bool:
    try:
        rule = table.rule_at(start)
    except CfiUnsupported:
        return False
    return (rule is not None and rule.cfa == (("esp", "rsp")[word == 8], word)
            and rule.saved.get(rule.return_register) == ("at", -word))


def object_at(images, address: int):
    """The mapped object (images: the door's image map, by base) that holds `address`, or None."""
    i = bisect.bisect_right([m.base for m in images], address) - 1
    return images[i] if i >= 0 and address < images[i].end else None


def offset_name(mapped, address: int) -> str:
    """"module+0xoff": how stack reports name code no symbol covers."""
    return f"{mapped.name}+{address - mapped.base:#x}"


def place_name(door, process, address: int) -> str:
    """`address` as "module+0xoff" (the object it is in, as stack reports name stripped code),
    or hex outside every object."""
    mapped = object_at(door.images(process), address)
    return offset_name(mapped, address) if mapped is not None else f"{address:#x}"


def return_address_at_entry(door, process) -> tuple[int, int]:
    """(sp, [sp]) of the thread stopped at a function's first instruction."""
    cpu = door.cpu(process)
    word = cpu.arch.word
    sp = cpu.sp
    return sp, struct.unpack("<I" if word == 4 else "<Q", cpu.read(sp, word))[0]


def identify_caller(functions: Functions, process, return_address: int,
                    callee: FunctionId) -> tuple[FunctionId | None, str | None]:
    """(caller, why it is uncertain or None) for a call of `callee` returning to
    `return_address`."""
    caller = functions.at(process, return_address - 1)
    call = _call_before(functions.door, process, return_address)
    if call is None:
        return caller, f"no call before the return address {return_address:#x}"
    target = call.branch_target
    if target is not None and target != callee.entry:
        via = functions.at(process, target)
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
