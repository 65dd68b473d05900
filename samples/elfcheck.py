"""Structural checks on the built sample binaries.

Used by build.py right after each build and by tests/e2e/samples/test_samples_build.py
on the committed binaries.  Every check returns a list of one-line problem
descriptions (empty when the binary is as the rest of trapline expects):

- a static, non-PIE executable (ET_EXEC, no PT_INTERP, no PT_DYNAMIC), because
  the loader maps samples at their link addresses without a dynamic linker;
- the ELF class and machine of its architecture directory;
- a symbol table with sized FUNC symbols (probes are placed by function name),
  but no DWARF sections (debug info is stripped to keep binaries small);
- every function defined in the sample's C source present as a sized symbol
  and starting with the frame-pointer prologue
  `push %ebp/%rbp; mov %esp/%rsp,%ebp/%rbp`, which the emulate strategy
  (US 7,350,196) patches;
- `fib` making exactly two direct calls to itself and no jump to itself, so
  that fib(n) runs exactly 2*F(n+1)-1 invocations of fib.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import capstone
from elftools.elf.elffile import ELFFile

# arch directory name -> (EI_CLASS, e_machine, capstone mode, frame register)
ARCHES = {
    "i386": ("ELFCLASS32", "EM_386", capstone.CS_MODE_32, "ebp", "esp"),
    "x86_64": ("ELFCLASS64", "EM_X86_64", capstone.CS_MODE_64, "rbp", "rsp"),
}


@dataclass(frozen=True)
class FunctionSymbol:
    name: str
    address: int
    size: int


def function_symbols(elf: ELFFile) -> dict[str, FunctionSymbol]:
    """Sized STT_FUNC symbols of .symtab, by name (first definition wins)."""
    symtab = elf.get_section_by_name(".symtab")
    found: dict[str, FunctionSymbol] = {}
    if symtab is None:
        return found
    for sym in symtab.iter_symbols():
        if sym["st_info"]["type"] != "STT_FUNC" or sym["st_shndx"] == "SHN_UNDEF":
            continue
        found.setdefault(sym.name, FunctionSymbol(sym.name, sym["st_value"], sym["st_size"]))
    return found


# A definition in the samples' style: at column 0, a return type, the name and
# "(", and no ";" at the end of the line (which would make it a declaration).
_DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\((?!.*;\s*$)", re.MULTILINE)


def defined_functions(source: str) -> list[str]:
    """Names of the functions a sample's C source defines, in source order."""
    names = [m.group(1) for m in _DEFINITION.finditer(source)]
    return [n for n in names if not n.startswith("__")]  # skip __attribute__ lines


def function_bytes(elf: ELFFile, func: FunctionSymbol) -> bytes:
    """The bytes of a function, read through the PT_LOAD segment holding it."""
    for seg in elf.iter_segments(type="PT_LOAD"):
        start = seg["p_vaddr"]
        if start <= func.address and func.address + func.size <= start + seg["p_filesz"]:
            offset = func.address - start
            return seg.data()[offset:offset + func.size]
    raise ValueError(f"{func.name} at {func.address:#x} is not inside a PT_LOAD segment")


def check_static_executable(elf: ELFFile, arch: str) -> list[str]:
    ei_class, machine = ARCHES[arch][0], ARCHES[arch][1]
    problems = []
    if elf["e_ident"]["EI_CLASS"] != ei_class:
        problems.append(f"class is {elf['e_ident']['EI_CLASS']}, expected {ei_class}")
    if elf["e_machine"] != machine:
        problems.append(f"machine is {elf['e_machine']}, expected {machine}")
    if elf["e_type"] != "ET_EXEC":
        problems.append(f"type is {elf['e_type']}, expected ET_EXEC (static, non-PIE)")
    for seg in elf.iter_segments():
        if seg["p_type"] in ("PT_INTERP", "PT_DYNAMIC"):
            problems.append(f"has {seg['p_type']}: not a static executable")
    return problems


def check_symbols_and_debug(elf: ELFFile, required: list[str]) -> list[str]:
    problems = []
    if elf.get_section_by_name(".symtab") is None:
        problems.append("no .symtab: function symbols were stripped")
    debug = sorted(s.name for s in elf.iter_sections() if s.name.startswith(".debug"))
    if debug:
        problems.append(f"debug sections left: {', '.join(debug)}")
    funcs = function_symbols(elf)
    for name in required:
        if name not in funcs:
            problems.append(f"no FUNC symbol {name}")
        elif funcs[name].size == 0:
            problems.append(f"FUNC symbol {name} has size 0")
    return problems


def disassemble(elf: ELFFile, arch: str, func: FunctionSymbol) -> list[capstone.CsInsn]:
    md = capstone.Cs(capstone.CS_ARCH_X86, ARCHES[arch][2])
    return list(md.disasm(function_bytes(elf, func), func.address))


def check_prologue(elf: ELFFile, arch: str, func: FunctionSymbol) -> list[str]:
    """push %ebp; mov %esp,%ebp (Intel syntax: mov ebp, esp) at the entry."""
    fp, sp = ARCHES[arch][3], ARCHES[arch][4]
    insns = disassemble(elf, arch, func)[:2]
    got = [(i.mnemonic, i.op_str) for i in insns]
    if got != [("push", fp), ("mov", f"{fp}, {sp}")]:
        shown = "; ".join(f"{m} {o}" for m, o in got)
        return [f"{func.name} does not start with push {fp}; mov {fp}, {sp} (got: {shown})"]
    return []


def check_fib_recursion(elf: ELFFile, arch: str, fib: FunctionSymbol) -> list[str]:
    return fib_recursion_problems(disassemble(elf, arch, fib), fib.address)


def fib_recursion_problems(insns: list[capstone.CsInsn], fib_address: int) -> list[str]:
    """Two direct self-calls and no self-jump: no tail call, no accumulator loop."""
    self_calls, self_jumps = 0, 0
    for insn in insns:
        target = _direct_target(insn)
        if insn.mnemonic == "call" and target == fib_address:
            self_calls += 1
        elif insn.mnemonic.startswith("j") and target == fib_address:
            self_jumps += 1
    problems = []
    if self_calls != 2:
        problems.append(f"fib has {self_calls} direct calls to itself, expected 2")
    if self_jumps:
        problems.append(f"fib jumps to its own entry {self_jumps} time(s): tail call")
    return problems


def _direct_target(insn: capstone.CsInsn) -> int | None:
    try:
        return int(insn.op_str, 16)
    except ValueError:
        return None  # indirect or register operand


def check_sample(path: str, arch: str, name: str, source: str, *,
                 frame_pointers: bool = True) -> list[str]:
    """All checks for one built sample; `name` is the sample (fib, hello, ...)
    and `source` the text of its C file; a sample built without frame pointers
    (build.py VARIANTS) is not asked for the frame-pointer prologue."""
    required = defined_functions(source)
    if "main" not in required:
        return [f"{name}.c defines no main()"]
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        problems = check_static_executable(elf, arch)
        problems += check_symbols_and_debug(elf, required)
        if problems:
            return problems
        funcs = function_symbols(elf)
        for fname in required if frame_pointers else ():
            problems += check_prologue(elf, arch, funcs[fname])
        if name == "fib":
            problems += check_fib_recursion(elf, arch, funcs["fib"])
    return problems
