"""The code of a function to relocate (US 6,957,421: "the function's code, from its
symbol bounds and the reachable basic blocks").

`find_function(debug, process, address)` gives the function that holds `address` — its bounds
from the symbol table, never guessed — and its reachable instructions: decoded from the entry,
following every branch whose target lies inside the bounds (a target outside them, a tail
call, is an exit to original code), in address order. Only what can be reached is copied:
padding and code past a no-return call are never decoded unless a branch leads there.

What makes a function impossible to relocate is refused with a one-line reason (the policy
tables, instrumenter/insn/policy.py, decide each instruction):
  * no symbol covers the address (unknown bounds);
  * an indirect jump in the reachable code: it may land anywhere in the body (a jump table,
    a computed goto) and its target cannot be retargeted into the copy;
  * an instruction the relocator refuses (REFUSED class), but for `syscall` and `int 0x80`,
    which a copy of the whole function makes itself (syscalls.py);
  * a branch into the middle of an instruction (overlapping code);
  * the address itself is not one of the reachable instruction starts.
The function's `calls` are the reachable calls whose return address lies inside the bounds:
each gets a return point (returns.py).
"""
from dataclasses import dataclass

from ...errors import DecodeError, InstrumenterError
from ...insn.decode import Insn, decode
from ...insn.policy import InsnClass, classify
from ..placement import image_at
from .syscalls import is_system_call


@dataclass(frozen=True)
class FunctionCode:
    name: str
    start: int
    end: int                         # the symbol's end: [start, end)
    insns: tuple[Insn, ...]          # reachable instructions, by address
    index: dict                      # address -> position in insns

    @property
    def calls(self) -> tuple[Insn, ...]:
        """Reachable calls whose ORIGINAL return address is an instruction of the function:
        the places a callee returns to (returns.py plants a breakpoint there)."""
        return tuple(i for i in self.insns if "call" in i.groups and i.next_address in self.index)

    def contains(self, address: int) -> bool:
        return self.start <= address < self.end


def function_symbol(process, address: int):
    image = image_at(process, address)
    return image.symbols.function_at(address) if image is not None else None


def find_function(debug, process, address: int, cache: dict | None = None) -> FunctionCode:
    """The function holding `address`, its reachable code decoded (module docstring);
    InstrumenterError with the reason when it cannot be relocated."""
    symbol = function_symbol(process, address)
    if symbol is None or symbol.size == 0:
        raise InstrumenterError(f"{address:#x}: no function symbol gives its bounds")
    key = (process.space.serial, symbol.addr, symbol.size)
    found = cache.get(key) if cache is not None else None
    if found is None:
        code = debug.read_memory(process, symbol.addr, symbol.size)     # under any patches
        found = analyse(code, symbol.addr, symbol.name, debug.arch(process).name)
        if cache is not None:
            cache[key] = found
    if isinstance(found, InstrumenterError):
        raise found
    if address not in found.index:
        raise InstrumenterError(f"{address:#x} is not an instruction of {found.name} reachable "
                                "from its entry")
    return found


def analyse(code: bytes, start: int, name: str, arch: str):
    """FunctionCode, or the InstrumenterError saying why the function cannot be relocated
    (kept in the cache like an answer: the function's bytes do not change)."""
    end = start + len(code)
    found: dict[int, Insn] = {}
    work = [start]
    while work:
        address = work.pop()
        while start <= address < end and address not in found:
            try:
                insn = decode(code[address - start:], address, arch)
            except DecodeError as e:
                return InstrumenterError(f"{name}: {e}")
            refusal = _refusal(insn, name)
            if refusal is not None:
                return InstrumenterError(refusal)
            found[address] = insn
            target = insn.branch_target
            if target is not None and start <= target < end:
                work.append(target)          # a branch or an internal call: into the copy too
            if insn.base_mnemonic in ("jmp", "ret", "retf", "ud2", "hlt") \
                    or "iret" in insn.groups:
                break
            address = insn.next_address
    insns = tuple(found[a] for a in sorted(found))
    for insn, following in zip(insns, insns[1:]):   # a branch into the middle of one
        if insn.next_address > following.address:
            return InstrumenterError(f"{name}: code at {following.address:#x} overlaps {insn}")
    return FunctionCode(name, start, end, insns, {i.address: n for n, i in enumerate(insns)})


def _refusal(insn: Insn, name: str) -> str | None:
    if is_system_call(insn):
        return None                  # the copy makes it itself (syscalls.py)
    c = classify(insn)
    if c.cls is InsnClass.REFUSED:
        return f"{insn} in {name} cannot be relocated: {c.reason}"
    if c.cls is InsnClass.JMP_INDIRECT:
        return (f"{insn} in {name}: an indirect jump (a jump table?) may land anywhere in the "
                "body, which a copy cannot retarget")
    return None
