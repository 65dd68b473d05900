"""Placement validation (US 9,336,001, FIG. 3/4): a probe address must be mapped, executable and
on an instruction boundary; otherwise a clear error and nothing is patched.

Boundaries come from a linear disassembly from the nearest known instruction start: the sized
function that contains the address, else a symbol, FDE, entry point or section start
(instrumenter/insn/code_boundaries.py).
"""
from kernel_model.debug import PROT_EXEC, DebugInterface, PatchConflict

from ..insn.code_boundaries import boundaries_of
from ..errors import InstrumenterError

# The object (program, ld.so, library) holding an address, relocated: through the debug door.
image_at = DebugInterface.image_at


def validate_site(process, address: int) -> None:
    """A probe site must be mapped, executable and start an instruction of its object's code
    (insn/code_boundaries.py, which reads the object's file: the code under any patch). An
    executable address no object holds (code a program wrote into anonymous memory) has no
    known boundary: the decoder alone vouches for it there."""
    vma = DebugInterface.area_at(process, address)
    if vma is None:
        raise InstrumenterError(f"{address:#x} is not mapped in pid {process.pid}")
    if not vma.perms & PROT_EXEC:
        raise InstrumenterError(f"{address:#x} is not executable (in {vma.name.decode(errors='replace') or 'anonymous memory'})")
    image = image_at(process, address)
    if image is None:
        return
    finder = boundaries_of(image)
    if finder.holds(address):
        finder.check(address)


def patch_site(debug, process, address: int, data: bytes, owner):
    """Patch the code through the door (kernel_model/debug/patches.py), which keeps the
    original bytes; a conflict with another patch is this placement's refusal."""
    try:
        return debug.patch(process, address, data, owner)
    except PatchConflict as conflict:
        raise InstrumenterError(str(conflict)) from None
