"""args.NAME in a uprobe: the probed function's parameters as the binary's DWARF names them.

bpftrace reads a uprobe's args from the object's debug information (its DWARF parser,
src/dwarf_parser.cpp: each DW_TAG_formal_parameter of the function's DW_TAG_subprogram, in
order) and reads the value where the calling convention puts it at the function's entry.
trapline does the same through pyelftools: a parameter's place in the list is its place in the
psABI's argument order, so args.NAME is the word argN already reads (instrumenter/probes/
context.py argument_words), cut to the parameter's type.

Why not the DW_AT_location DWARF gives each parameter: at -O0 gcc gives a frame-base offset
(DW_OP_fbreg), where the prologue will store the register; at the entry, where the uprobe
stands, the prologue has not run yet and the slot holds garbage. The argument registers (or the
caller's stack words on i386) are what the entry sees.

What fits: integers (signed ones sign-extended from their size, as bpftrace prints an int
parameter) and pointers (a char * is then a str() away). A float or a structure passed by value
before or at the parameter moves the others (x86-64 psABI 3.2.3: SSE class, MEMORY class), so it
is refused with the reason. On i386 (SysV i386 psABI 2.2.2) every argument is on the stack in
4-byte words and a 64-bit integer takes two of them, low word first.
"""
import fnmatch
import os
from dataclasses import dataclass
from functools import lru_cache

# DW_ATE_* (DWARF 5, 7.8): the base types a word can carry
SIGNED_ENCODINGS = {0x05, 0x06}               # DW_ATE_signed, DW_ATE_signed_char
UNSIGNED_ENCODINGS = {0x02, 0x07, 0x08, 0x10}  # boolean, unsigned, unsigned_char, UTF
QUALIFIERS = ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
              "DW_TAG_restrict_type", "DW_TAG_atomic_type")
POINTERS = ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type")


class DwarfArgError(ValueError):
    """Why args.NAME cannot be read in this uprobe (one line, for the checks' caret)."""


@dataclass(frozen=True)
class Parameter:
    name: str
    word: int            # the first argument word it is in (argN's N)
    size: int            # bytes
    signed: bool
    words: int = 1       # 2 for a 64-bit integer on i386

    def value(self, arg) -> int:
        """The parameter's value from `arg` (the hit's argN reader)."""
        raw = arg(self.word)
        if self.words == 2:
            raw = (raw & 0xFFFFFFFF) | (arg(self.word + 1) & 0xFFFFFFFF) << 32
        bits = self.size * 8
        raw &= (1 << bits) - 1
        if self.signed and raw >> (bits - 1):
            raw -= 1 << bits
        return raw


def parameters_of(path: str, pattern: str) -> dict[str, dict[str, Parameter]]:
    """function -> {parameter name -> Parameter} for the functions of the ELF file at host `path`
    that `pattern` (a name or a wildcard) matches; DwarfArgError if there is no such file, it has
    no DWARF, or no function with DWARF matches."""
    if not os.path.isfile(path):
        raise DwarfArgError(f"args.NAME in a uprobe reads the DWARF of the binary: {path!r} is not a "
                            "file on the host (name it by its path), or use arg0..argN")
    stat = os.stat(path)
    functions = _functions(os.path.realpath(path), stat.st_size, stat.st_mtime_ns)
    matched = {name: params for name, params in functions.items() if fnmatch.fnmatchcase(name, pattern)}
    if not matched:
        raise DwarfArgError(f"{path} has no DWARF for {pattern} (build it with -g), use arg0..argN")
    return matched


def lookup(path: str, pattern: str, field: str) -> dict[str, Parameter]:
    """function -> the Parameter named `field`, for every function `pattern` matches in `path`."""
    found = {}
    for function, params in parameters_of(path, pattern).items():
        parameter = params.get(field)
        if parameter is None:
            known = ", ".join(params) or "none"
            raise DwarfArgError(f"{function} has no parameter {field!r} (its parameters: {known})")
        if isinstance(parameter, str):
            raise DwarfArgError(f"{function}'s parameter {field!r}: {parameter}")
        found[function] = parameter
    return found


@lru_cache(maxsize=16)
def _functions(path: str, size: int, mtime_ns: int) -> dict[str, dict]:
    """Every defined function's parameters (size and mtime in the key: a rebuilt file is read
    again). A parameter that cannot be read, or that follows one, maps to the reason (a str)."""
    from elftools.common.exceptions import DWARFError, ELFError
    from elftools.elf.elffile import ELFFile
    try:
        with open(path, "rb") as stream:
            elf = ELFFile(stream)
            if not elf.has_dwarf_info():
                return {}
            word = elf.elfclass // 8
            functions = {}
            for unit in elf.get_dwarf_info().iter_CUs():
                for die in unit.get_top_DIE().iter_children():
                    if die.tag == "DW_TAG_subprogram" and "DW_AT_name" in die.attributes \
                            and "DW_AT_declaration" not in die.attributes:
                        name = die.attributes["DW_AT_name"].value.decode(errors="replace")
                        functions.setdefault(name, _parameters(die, word))
            return functions
    except (OSError, ELFError, DWARFError):
        return {}


def _parameters(subprogram, word: int) -> dict:
    params: dict = {}
    index, blocked = 0, None
    for child in subprogram.iter_children():
        if child.tag != "DW_TAG_formal_parameter" or "DW_AT_name" not in child.attributes:
            continue
        name = child.attributes["DW_AT_name"].value.decode(errors="replace")
        kind = _kind(child, word)
        if blocked is not None:
            params[name] = blocked
            continue
        if isinstance(kind, str):
            params[name] = kind
            blocked = f"it follows {name}, {kind}"
            continue
        size, signed = kind
        words = 2 if word == 4 and size == 8 else 1
        params[name] = Parameter(name, index, size, signed, words)
        index += words
    return params


def _kind(die, word: int):
    """(size, signed) for a type a word carries, else the reason it cannot be read."""
    if "DW_AT_type" not in die.attributes:
        return "it has no type"
    kind = die.get_DIE_from_attribute("DW_AT_type")
    while kind.tag in QUALIFIERS and "DW_AT_type" in kind.attributes:
        kind = kind.get_DIE_from_attribute("DW_AT_type")
    if kind.tag in POINTERS:
        return word, False
    size = kind.attributes["DW_AT_byte_size"].value if "DW_AT_byte_size" in kind.attributes else 0
    if kind.tag == "DW_TAG_enumeration_type" and 0 < size <= 8:
        return size, True
    if kind.tag == "DW_TAG_base_type" and 0 < size <= 8:
        encoding = kind.attributes["DW_AT_encoding"].value
        if encoding in SIGNED_ENCODINGS or encoding in UNSIGNED_ENCODINGS:
            return size, encoding in SIGNED_ENCODINGS
    what = "floating-point number" if kind.tag == "DW_TAG_base_type" else \
        kind.tag.removeprefix("DW_TAG_").replace("_type", "")
    return f"a {what} passed by value, which the psABI does not pass in argument words"
