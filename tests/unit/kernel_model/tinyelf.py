"""Tiny static ELF programs for kernel tests: our own code in the loader tests' byte-built ELF."""
from pathlib import Path

from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import CODE, CODE_OFFSET, DATA_OFFSET, build_elf


def tiny_elf(arch: str, source: str, data: bytes = b"") -> bytes:
    """An executable whose entry runs `source`; `data` follows the code, and the label-free
    placeholder DATA_ADDR in `source` is replaced by its address (assembled twice)."""
    bits = 32 if arch == "i386" else 64
    built = build_elf(bits)
    entry = built.entry
    code = asm(source.replace("DATA_ADDR", hex(entry)), arch, entry)
    code = asm(source.replace("DATA_ADDR", hex(entry + len(code))), arch, entry)
    blob = code + data
    if len(blob) > len(CODE):
        raise ValueError(f"program too long for the builder's code area ({len(blob)} bytes)")
    built.data[CODE_OFFSET:CODE_OFFSET + len(blob)] = blob
    return built.bytes()


def write_program(folder: Path, name: str, elf: bytes) -> Path:
    path = folder / name
    path.write_bytes(elf)
    path.chmod(0o755)
    return path


def program_elf(arch: str, source: str) -> bytes:
    """Like tiny_elf for longer code: the first PT_LOAD grows to hold it (up to the data segment),
    and DATA_ADDR is the writable data segment (DATA_MEMSZ bytes, from elf_builder)."""
    built = build_elf(32 if arch == "i386" else 64)
    code = asm(source.replace("DATA_ADDR", hex(built.data_vaddr)), arch, built.entry)
    if CODE_OFFSET + len(code) > DATA_OFFSET:
        raise ValueError(f"program too long ({len(code)} bytes)")
    text = built.load_indexes[0]
    built.set_phdr(text, "filesz", CODE_OFFSET + len(code))
    built.set_phdr(text, "memsz", CODE_OFFSET + len(code))
    built.data[CODE_OFFSET:CODE_OFFSET + len(code)] = code
    return built.bytes()
