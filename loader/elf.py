"""ELF executable -> LoadedImage. elf_structs reads the structures; this module decides what is acceptable.

The checks follow Linux's load_elf_binary (fs/binfmt_elf.c): what it refuses with ENOEXEC we
refuse with a one-line LoaderError, plus what the kernel model relies on (an entry point that
can execute, segments in user space that do not overlap).

An exec reads only what Linux reads: the ELF header and the program header table (and the
PT_LOAD bytes). Symbols are read when first asked for (loader.elf_symbols). A file that was
loaded before in this process is not parsed again: images are immutable, so load_elf hands out
the one it built for the same bytes (a fork+exec loop of busybox shares one image
and its segment bytes instead of parsing and copying 2 MB per exec).
"""
from __future__ import annotations

from collections import OrderedDict

from loader import program_headers as ph_rules
from loader.arch import BY_MACHINE, ElfArch
from loader.elf_structs import ELF_MAGIC, ElfHeader, read_header, read_program_headers
from loader.elf_symbols import SymbolReader
from loader.errors import LoaderError
from loader.image import LoadedImage
from loader.program_headers import ProgramHeader

ET_EXEC, ET_DYN = 2, 3
MIN_EHDR_SIZE = 52          # sizeof(Elf32_Ehdr): e_machine is read from that much
BINPRM_BUF_SIZE = 256       # include/linux/binfmts.h: what exec reads of the file's start
MAX_PHDR_TABLE = 65536      # load_elf_phdrs refuses a larger program header table

# Images built in this process, most recently used last; bounded so a long session that execs
# many different files (or a fuzzer) does not keep them all.
CACHE_ENTRIES = 16
CACHE_BYTES = 32 << 20
CACHE_PROBE = 4096
_cache: OrderedDict[tuple, tuple[bytes, LoadedImage]] = OrderedDict()


def header_buffer(data: bytes) -> bytes:
    """The file's first bytes as exec sees them: read into a zero-filled BINPRM_BUF_SIZE buffer
    (fs/exec.c prepare_binprm), so a file shorter than an ELF header has zeros for the rest."""
    return data[:BINPRM_BUF_SIZE].ljust(BINPRM_BUF_SIZE, b"\0")


def _identify(data: bytes) -> ElfArch:
    """Magic and machine pick the ABI, as they pick the binfmt handler in Linux: the native
    binfmt_elf takes EM_X86_64 as ELF64, the compat one EM_386 as ELF32 (arch/x86/include/asm/
    elf.h elf_check_arch, compat_elf_check_arch). Neither looks at e_ident's class, byte order
    or version bytes (the 45-byte "teensy" ELF keeps a program header there)."""
    if not data:
        raise LoaderError("empty file")
    if not data.startswith(ELF_MAGIC):
        raise LoaderError("not an ELF file (bad magic)")
    header = header_buffer(data)[:MIN_EHDR_SIZE]
    machine = read_header(header, 32).machine   # same offset in both
    arch = BY_MACHINE.get(machine)
    if arch is None:
        raise LoaderError(f"unsupported machine e_machine={machine}: only EM_386 and EM_X86_64 run")
    return arch


def _file_type(header: ElfHeader) -> int:
    if header.type not in (ET_EXEC, ET_DYN):
        raise LoaderError(f"unsupported ELF type e_type={header.type}: only ET_EXEC and ET_DYN executables load")
    return header.type


def _program_headers(data: bytes, header: ElfHeader, arch: ElfArch) -> list[ProgramHeader]:
    """The table as elf_structs reads it, after checking that the table itself is where it claims."""
    phoff, phent, phnum = header.phoff, header.phentsize, header.phnum
    if phent != arch.phent:
        raise LoaderError(f"bad e_phentsize {phent}: ELF{arch.bits} program headers are {arch.phent} bytes")
    if phnum == 0:
        raise LoaderError("no program headers (e_phnum is 0)")
    if phnum * phent > MAX_PHDR_TABLE:
        raise LoaderError(f"too many program headers (e_phnum {phnum})")
    if phoff + phnum * phent > len(data):
        raise LoaderError(f"program header table [{phoff:#x}, {phoff + phnum * phent:#x}) "
                          f"extends beyond the end of the file ({len(data):#x} bytes)")
    return read_program_headers(data, arch.bits, phoff, phnum)


def detect_arch(data: bytes) -> str | None:
    """"i386" / "x86_64" when `data` starts like an executable for one of them, else None.
    Cheap (no program header checks): exec uses it to pick the syscall ABI."""
    try:
        return _identify(bytes(data)).name
    except LoaderError:
        return None


def _build(data: bytes, path: str, pie_base: int | None, shared_object: bool = False) -> LoadedImage:
    arch = None
    try:
        arch = _identify(data)
        return _build_for(arch, data, path, pie_base, shared_object)
    except LoaderError as exc:
        header_size = arch.ehsize if arch is not None else MIN_EHDR_SIZE
        if len(data) >= header_size or not data.startswith(ELF_MAGIC):
            raise
        # The header's missing bytes read as zeros (header_buffer); say so with the reason.
        what = f"the ELF{arch.bits} header" if arch is not None else "an ELF header"
        raise LoaderError(f"truncated ELF file: {len(data)} bytes, shorter than {what}: {exc}") from None


def _build_for(arch: ElfArch, data: bytes, path: str, pie_base: int | None,
               shared_object: bool = False) -> LoadedImage:
    header = read_header(header_buffer(data)[:arch.ehsize], arch.bits)
    is_pie = _file_type(header) == ET_DYN
    phdrs = _program_headers(data, header, arch)
    interp = ph_rules.interpreter_path(phdrs, data)
    loads = ph_rules.load_headers(phdrs, len(data))
    bias = ph_rules.compute_load_bias(loads, is_pie, arch, pie_base)
    ph_rules.check_address_space(loads, bias, arch)
    entry = header.entry + bias
    implies_exec = ph_rules.read_implies_exec(phdrs, arch)
    if not shared_object:       # a library is not run from its entry (libm's e_entry is 0)
        ph_rules.check_entry(entry, loads, bias, implies_exec)
    phdr_addr = ph_rules.program_header_address(phdrs, loads, header.phoff, header.phnum * arch.phent, bias)
    segments = ph_rules.make_segments(loads, data, bias, implies_exec)
    return LoadedImage(path=path, arch=arch.name, bits=arch.bits, entry=entry, segments=segments,
                       phdr_addr=phdr_addr, phent=arch.phent, phnum=len(phdrs), interp=interp,
                       is_pie=is_pie, load_bias=bias, symbol_reader=SymbolReader(data, bias, segments),
                       executable_stack=ph_rules.executable_stack(phdrs), read_implies_exec=implies_exec,
                       dynamic=ph_rules.dynamic_address(phdrs, bias))


def load_elf(data: bytes, path: str = "<memory>", pie_base: int | None = None, *,
             shared_object: bool = False) -> LoadedImage:
    """Validate `data` as an x86/x86-64 executable (or a shared object such as ld.so) and describe
    how to map it; `interp` names the program interpreter a dynamic program needs."""
    data = bytes(data)
    # The length and the first and last page pick the candidate at once; only a full
    # comparison of the bytes (a memcmp, several times cheaper than hashing them)
    # lets it be reused, so two files never share an image unless they are identical.
    key = (len(data), pie_base, shared_object, data[:CACHE_PROBE], data[-CACHE_PROBE:])
    cached = _cache.get(key)
    if cached is not None and cached[0] == data:
        _cache.move_to_end(key)
        image = cached[1]
        return image if image.path == path else image._replace(path=path)  # shares segments and symbols
    image = _build(data, path, pie_base, shared_object)
    _remember(key, data, image)
    return image


def _remember(key: tuple, data: bytes, image: LoadedImage) -> None:
    if len(data) > CACHE_BYTES:
        return
    _cache[key] = (data, image)
    total = sum(len(entry[0]) for entry in _cache.values())
    while len(_cache) > CACHE_ENTRIES or total > CACHE_BYTES:
        _, (dropped, _) = _cache.popitem(last=False)
        total -= len(dropped)


def forget_loaded_images() -> None:
    """Drop every image load_elf keeps (they stay valid for whoever holds them)."""
    _cache.clear()


def load_elf_file(path: str, pie_base: int | None = None) -> LoadedImage:
    """Read and load `path`; an unreadable file is a LoaderError like a malformed one."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise LoaderError(f"cannot read {path}: {exc.strerror or exc}") from None
    return load_elf(data, path=str(path), pie_base=pie_base)
