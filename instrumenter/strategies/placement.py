"""Placement validation (seed 000, FIG. 3/4): a probe address must be mapped, executable and
on an instruction boundary; otherwise a clear error and nothing is patched.

Boundaries come from the function symbols and a linear disassembly of the function that
contains the address (instrumenter/insn/decode.py).
"""
from kernel_model.debug import PROT_EXEC, DebugInterface, PatchConflict

from ..insn.decode import boundaries
from ..errors import InstrumenterError

# The object (program, ld.so, library) holding an address, relocated: through the debug door.
image_at = DebugInterface.image_at


def validate_site(process, address: int, read_original, cache: dict | None = None) -> None:
    """`read_original(address, size)` reads the program's bytes without any probe patches;
    `cache` keeps each function's instruction starts across placements."""
    vma = DebugInterface.area_at(process, address)
    if vma is None:
        raise InstrumenterError(f"{address:#x} is not mapped in pid {process.pid}")
    if not vma.perms & PROT_EXEC:
        raise InstrumenterError(f"{address:#x} is not executable (in {vma.name.decode(errors='replace') or 'anonymous memory'})")
    image = image_at(process, address)
    function = image.symbols.function_at(address) if image is not None else None
    if function is None:
        return               # no symbol covers it: the decoder alone vouches for the address
    key = (process.space.serial, function.addr, function.size)
    starts = cache.get(key) if cache is not None else None
    if starts is None:
        code = read_original(function.addr, function.size)
        starts = set(boundaries(code, function.addr, DebugInterface.arch(process).name))
        if cache is not None:
            cache[key] = starts
    if address not in starts:
        before = max((s for s in starts if s < address), default=function.addr)
        raise InstrumenterError(f"{address:#x} is not an instruction boundary in {function.name} "
                                f"(the instruction there starts at {before:#x})")


def patch_site(debug, process, address: int, data: bytes, owner):
    """Patch the code through the door (kernel_model/debug_patches.py), which keeps the
    original bytes; a conflict with another patch is this placement's refusal."""
    try:
        return debug.patch(process, address, data, owner)
    except PatchConflict as conflict:
        raise InstrumenterError(str(conflict)) from None
