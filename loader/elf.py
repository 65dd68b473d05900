"""ELF executable -> LoadedImage. lief reads the structures; this module decides what is acceptable.

The checks follow Linux's load_elf_binary (fs/binfmt_elf.c): what it refuses with ENOEXEC we
refuse with a one-line LoaderError, plus what the kernel model relies on (an entry point that
can execute, segments in user space that do not overlap).
"""
from __future__ import annotations

import warnings

import lief

from loader import program_headers as ph_rules
from loader.arch import BY_MACHINE, ElfArch
from loader.elf_symbols import symbols_from_lief
from loader.errors import LoaderError
from loader.image import LoadedImage
from loader.program_headers import ProgramHeader

# lief reports malformed input on stderr; our errors say it in one line instead.
lief.logging.disable()

ET_EXEC, ET_DYN = 2, 3
ELFDATA2LSB = 1
MIN_EHDR_SIZE = 52          # sizeof(Elf32_Ehdr): below this not even the class can be trusted
MAX_PHDR_TABLE = 65536      # load_elf_phdrs refuses a larger program header table
ELF_MAGIC_LEN = 4


def _parse(data: bytes, *, symbols: bool):
    """lief's view of the file, or LoaderError. lief never sees an obviously short file."""
    if not data:
        raise LoaderError("empty file")
    if len(data) < ELF_MAGIC_LEN or not lief.is_elf(list(data[:ELF_MAGIC_LEN])):
        raise LoaderError("not an ELF file (bad magic)")
    if len(data) < MIN_EHDR_SIZE:
        raise LoaderError(f"truncated ELF file: {len(data)} bytes, shorter than an ELF header")
    config = lief.ELF.ParserConfig()
    config.parse_relocations = False
    config.parse_symbol_versions = False
    config.parse_notes = False
    config.parse_overlay = False
    config.parse_symtab_symbols = symbols
    config.parse_dyn_symbols = symbols
    try:
        binary = lief.ELF.parse(bytes(data), config)
    except Exception as exc:  # lief raises assorted C++ errors on garbage; all mean "malformed"
        raise LoaderError(f"malformed ELF file: {type(exc).__name__}: {exc}".splitlines()[0]) from None
    if binary is None:
        raise LoaderError("malformed ELF file: its headers cannot be parsed")
    return binary


def _header_arch(binary, file_size: int) -> ElfArch:
    """Byte order, machine and class must agree with one of the two supported ABIs."""
    header = binary.header
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lief warns when an enum field holds an unknown value
        data_encoding = int(header.identity_data)
        machine = int(header.machine_type)
        elf_class = int(header.identity_class)
    if data_encoding != ELFDATA2LSB:
        raise LoaderError(f"not little-endian (EI_DATA={data_encoding}): x86 ELF files are ELFDATA2LSB")
    arch = BY_MACHINE.get(machine)
    if arch is None:
        raise LoaderError(f"unsupported machine e_machine={machine}: only EM_386 and EM_X86_64 run")
    if elf_class != arch.elf_class:
        raise LoaderError(f"wrong ELF class {elf_class} for {arch.name} (expected ELFCLASS{arch.bits}; "
                          "x32 and other mixes are not supported)")
    if file_size < arch.ehsize:
        raise LoaderError(f"truncated ELF file: {file_size} bytes, shorter than the ELF{arch.bits} header")
    return arch


def _file_type(binary) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        etype = int(binary.header.file_type)
    if etype not in (ET_EXEC, ET_DYN):
        raise LoaderError(f"unsupported ELF type e_type={etype}: only ET_EXEC and ET_DYN executables load")
    return etype


def _program_headers(binary, arch: ElfArch, file_size: int) -> list[ProgramHeader]:
    """The table as lief read it, after checking that the table itself is where it claims."""
    header = binary.header
    phoff, phent, phnum = header.program_header_offset, header.program_header_size, header.numberof_segments
    if phent != arch.phent:
        raise LoaderError(f"bad e_phentsize {phent}: ELF{arch.bits} program headers are {arch.phent} bytes")
    if phnum == 0:
        raise LoaderError("no program headers (e_phnum is 0)")
    if phnum * phent > MAX_PHDR_TABLE:
        raise LoaderError(f"too many program headers (e_phnum {phnum})")
    if phoff + phnum * phent > file_size:
        raise LoaderError(f"program header table [{phoff:#x}, {phoff + phnum * phent:#x}) "
                          f"extends beyond the end of the file ({file_size:#x} bytes)")
    segments = list(binary.segments)
    if len(segments) != phnum:
        raise LoaderError(f"malformed program headers: read {len(segments)} of {phnum}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [ProgramHeader(i, int(seg.type), int(seg.flags), seg.file_offset, seg.virtual_address,
                              seg.physical_size, seg.virtual_size) for i, seg in enumerate(segments)]


def detect_arch(data: bytes) -> str | None:
    """"i386" / "x86_64" when `data` starts like an executable for one of them, else None.
    Cheap (no symbols, no program header checks): exec uses it to pick the syscall ABI."""
    try:
        binary = _parse(data, symbols=False)
        return _header_arch(binary, len(data)).name
    except LoaderError:
        return None


def load_elf(data: bytes, path: str = "<memory>", pie_base: int | None = None) -> LoadedImage:
    """Validate `data` as a static x86/x86-64 executable and describe how to map it."""
    data = bytes(data)
    binary = _parse(data, symbols=True)
    arch = _header_arch(binary, len(data))
    is_pie = _file_type(binary) == ET_DYN
    phdrs = _program_headers(binary, arch, len(data))
    ph_rules.reject_interpreter(phdrs, data)
    loads = ph_rules.load_headers(phdrs, len(data))
    bias = ph_rules.compute_load_bias(loads, is_pie, arch, pie_base)
    ph_rules.check_address_space(loads, bias, arch)
    entry = binary.header.entrypoint + bias
    ph_rules.check_entry(entry, loads, bias)
    header = binary.header
    phdr_addr = ph_rules.program_header_address(
        phdrs, loads, header.program_header_offset, header.numberof_segments * arch.phent, bias)
    segments = ph_rules.make_segments(loads, data, bias)
    return LoadedImage(path=path, arch=arch.name, bits=arch.bits, entry=entry, segments=segments,
                       phdr_addr=phdr_addr, phent=arch.phent, phnum=len(phdrs), interp=None,
                       is_pie=is_pie, load_bias=bias, symbols=symbols_from_lief(binary, bias, segments))


def load_elf_file(path: str, pie_base: int | None = None) -> LoadedImage:
    """Read and load `path`; an unreadable file is a LoaderError like a malformed one."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise LoaderError(f"cannot read {path}: {exc.strerror or exc}") from None
    return load_elf(data, path=str(path), pie_base=pie_base)
